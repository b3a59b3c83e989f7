// Evaluations: the reports of POST /v1/evaluations, listed; one opened with its means, its per-query
// table and a chart of one metric over the queries.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, seg } from "./api.js";
import { COLORS, bars, draw } from "./charts.js";

export function evaluationsStore() {
  return {
    list: [],
    current: null,
    metric: "",
    timer: null,

    async load() {
      const app = Alpine.store("app");
      const listed = await app.run(() => call("GET", "/v1/evaluations"));
      if (listed) this.list = listed.evaluations;
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
