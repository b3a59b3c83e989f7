// Compare: the same query ranked by two sides (two ranking settings, or for an admin the serving model
// and a registered candidate), positions that moved marked; then both sides over the judged queries
// (POST .../compare/metrics) as a table and a chart.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, corpusPath } from "./api.js";
import { COLORS, bars, draw } from "./charts.js";
import { rankingLabel, rankingOptions } from "./ranking.js";

function side(settings) {
  const body = rankingOptions(settings);
  if (settings.model) body.model = settings.model;
  return body;
}

function label(ranking, model) {
  return ranking ? `${rankingLabel(ranking)} · ${model}` : "";
}

export function compareStore() {
  return {
    left: { model: "", mode: "", alpha: 0.2, rerank: "" },
    right: { model: "", mode: "dense", alpha: 0.5, rerank: "" },
    result: null,
    report: null,
    metric: "",
    allRows: false,

    reset() {
      this.result = null;
      this.report = null;
    },

    async compare() {
      const app = Alpine.store("app");
      const search = Alpine.store("search");
      const query = search.query.trim();
      if (!query) {
        app.error = "query: type a query to compare its rankings";
        return;
      }
      const body = { query, k: Number(search.k) || 10, left: side(this.left), right: side(this.right) };
      const compared = await app.run(() => call("POST", corpusPath(app.corpus, "/compare"), body));
      if (!compared) return;
      this.result = compared;
      app.view = "compare";
      search.searched = query;
      await search.loadLabels();
    },

    heading(which) {
      const ranked = this.result && this.result[which];
      return ranked ? label(ranked.ranking, ranked.model) : "";
    },

    /** How a document moved on this side against the other: "▲2", "▼1", "new", "out" or "". */
    moved(which, id, rank) {
      if (!this.result) return "";
      const other = this.result[which === "left" ? "right" : "left"].results;
      const there = other.findIndex((r) => r.id === id);
      if (there < 0) return which === "right" ? "new" : "out";
      if (which === "left") return "";
      const delta = there + 1 - rank;
      if (delta > 0) return `▲${delta}`;
      if (delta < 0) return `▼${-delta}`;
      return "";
    },

    async loadMetrics() {
      const app = Alpine.store("app");
      const body = { left: side(this.left), right: side(this.right) };
      const report = await app.run(() => call("POST", corpusPath(app.corpus, "/compare/metrics"), body));
      if (!report) return;
      this.report = report;
      this.metric = report.metrics[0];
    },

    sideLabel(which) {
      return this.report ? label(this.report[which].ranking, this.report[which].model) : which;
    },

    /** The per-query rows, the most changed first (ties: most recently judged first); ten unless all. */
    rows() {
      if (!this.report) return [];
      const change = (row) => Math.abs(row.right[this.metric] - row.left[this.metric]);
      const ordered = this.report.per_query.map((row, i) => ({ row, i }))
        .sort((a, b) => change(b.row) - change(a.row) || a.i - b.i).map((x) => x.row);
      return this.allRows ? ordered : ordered.slice(0, 10);
    },

    delta(row) {
      const value = row.right[this.metric] - row.left[this.metric];
      return Math.abs(value) < 1e-9 ? "" : (value > 0 ? "+" : "") + value.toFixed(3);
    },

    drawMeans(canvas) {
      if (!this.report) return;
      const { metrics, left, right } = this.report;
      draw(canvas, bars(metrics, [
        { label: `left: ${this.sideLabel("left")}`, values: metrics.map((m) => left.means[m]), color: COLORS.left },
        { label: `right: ${this.sideLabel("right")}`, values: metrics.map((m) => right.means[m]), color: COLORS.right },
      ], { scales: { y: { min: 0, max: 1 } } }));
    },

    drawPerQuery(canvas) {
      if (!this.report || !this.metric) return;
      const rows = this.report.per_query;
      const short = rows.map((r) => (r.query.length > 28 ? `${r.query.slice(0, 27)}…` : r.query));
      draw(canvas, bars(short, [
        { label: "left", values: rows.map((r) => r.left[this.metric]), color: COLORS.left },
        { label: "right", values: rows.map((r) => r.right[this.metric]), color: COLORS.right },
      ], { plugins: { title: { display: true, text: `${this.metric} per judged query` } } }));
    },
  };
}
