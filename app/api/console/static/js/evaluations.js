// Evaluations: the reports of POST /v1/evaluations, listed; one opened with its means, its per-query
// table and a chart of one metric over the queries.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, seg } from "./api.js";
import { COLORS, bars, draw } from "./charts.js";

/** TREC qrels (`qid 0 docid grade` a line) as the API's qrels rows; an Error naming a broken line. */
export function parseQrels(text) {
  return text.split(/\r?\n/).map((line, n) => [line.trim(), n + 1]).filter(([line]) => line).map(([line, n]) => {
    const fields = line.split(/\s+/);
    const grade = Number(fields[3]);
    if (fields.length !== 4 || !Number.isInteger(grade)) throw new Error(`qrels: line ${n}: expected "qid 0 docid grade"`);
    return { query_id: fields[0], document_id: fields[2], relevance: grade };
  });
}

/** Queries as JSON lines ({"id", "text"} a line, what the judgements export writes). */
export function parseQueries(text) {
  return text.split(/\r?\n/).map((line, n) => [line.trim(), n + 1]).filter(([line]) => line).map(([line, n]) => {
    let value;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`queries: line ${n} is not JSON`);
    }
    if (!value || typeof value.id !== "string" || typeof value.text !== "string") throw new Error(`queries: line ${n} needs "id" and "text"`);
    return { id: value.id, text: value.text };
  });
}

export function evaluationsStore() {
  return {
    list: [],
    current: null,
    metric: "",
    timer: null,
    files: { qrels: null, queries: null },
    name: "",

    /** Start an evaluation of the chosen corpus from uploaded qrels and queries (the judgements export's). */
    async start() {
      const app = Alpine.store("app");
      const { qrels, queries } = this.files;
      if (!qrels || !queries) {
        app.error = "qrels: choose a TREC qrels file and a queries file (JSON lines)";
        return;
      }
      const body = await app.run(async () => ({
        name: this.name.trim() || `${app.corpus}: ${qrels.name}`,
        corpus: app.corpus,
        qrels: parseQrels(await qrels.text()),
        queries: parseQueries(await queries.text()),
      }));
      if (!body) return;
      const judged = new Set(body.qrels.map((row) => row.query_id));
      body.queries = body.queries.filter((q) => judged.has(q.id));
      const created = await app.run(() => call("POST", "/v1/evaluations", body));
      if (!created) return;
      await this.load();
      await this.open(created.id);
    },

    /** Score a saved query set now (Query sets keeps its history). */
    async runSet(name) {
      const app = Alpine.store("app");
      app.show("querysets");
      await Alpine.store("querysets").open(name);
      await Alpine.store("querysets").runNow();
    },

    async load() {
      const app = Alpine.store("app");
      const listed = await app.run(() => call("GET", "/v1/evaluations"));
      if (listed) this.list = listed.evaluations;
      if (app.corpus) await Alpine.store("querysets").load();
    },

    /** Show a report; one still queued or running is read again every second until it ends. */
    async open(id) {
      clearTimeout(this.timer);
      const app = Alpine.store("app");
      const report = await app.run(() => call("GET", `/v1/evaluations/${seg(id)}`));
      if (!report) return;
      this.current = report;
      if (!this.metric || !(this.metric in (report.metrics || {}))) this.metric = Object.keys(report.metrics || {})[0] || "";
      if (report.status === "queued" || report.status === "running") {
        this.timer = setTimeout(() => this.current && this.current.id === id && this.open(id), 1000);
      } else {
        await this.load();
      }
    },

    metricNames() {
      return Object.keys((this.current && this.current.metrics) || {});
    },

    rows() {
      const perQuery = (this.current && this.current.per_query) || {};
      return Object.entries(perQuery).map(([query, values]) => ({ query, values }));
    },

    value(number) {
      return typeof number === "number" ? number.toFixed(4) : "";
    },

    drawMeans(canvas) {
      if (!this.current || !this.current.metrics) return;
      const names = this.metricNames();
      draw(canvas, bars(names, [{ label: "mean", values: names.map((n) => this.current.metrics[n]), color: COLORS.left }],
        { scales: { y: { min: 0 } } }));
    },

    drawPerQuery(canvas) {
      if (!this.current || !this.metric) return;
      const rows = this.rows().sort((a, b) => b.values[this.metric] - a.values[this.metric]);
      draw(canvas, bars(rows.map((r) => r.query), [
        { label: this.metric, values: rows.map((r) => r.values[this.metric]), color: COLORS.right },
      ], { plugins: { title: { display: true, text: `${this.metric} per query, best first` } } }));
    },
  };
}
