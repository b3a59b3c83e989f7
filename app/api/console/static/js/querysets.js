// Query sets (Quepid's cases): named lists of the corpus's queries, scored on demand and automatically
// after every activation or ranking change. A set opens with a chart of its metrics run by run, the runs
// (why each ran, the model) and, for the latest, the queries whose MRR moved since the run before.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, corpusPath, seg } from "./api.js";
import { COLORS, draw } from "./charts.js";

const SERIES = [["MRR", COLORS.left], ["nDCG@10", COLORS.right], ["Recall@10", COLORS.metric]];
const UNFINISHED = new Set(["queued", "running"]);

export function querySetsStore() {
  return {
    sets: [],
    current: null,
    form: { name: "", queries: "" },
    timer: null,

    async load() {
      const app = Alpine.store("app");
      if (!app.corpus) return;
      const listed = await app.run(() => call("GET", corpusPath(app.corpus, "/query-sets")));
      if (listed) this.sets = listed.query_sets;
      if (this.current && !this.sets.some((s) => s.name === this.current.query_set.name)) this.current = null;
      if (this.current) await this.open(this.current.query_set.name);
    },

    /** Save the typed queries (one a line) as a set, or the searched query's set when none is typed. */
    async create() {
      const app = Alpine.store("app");
      const queries = this.form.queries.split(/\r?\n/).map((q) => q.trim()).filter(Boolean);
      const body = { name: this.form.name.trim(), queries };
      const created = await app.run(() => call("POST", corpusPath(app.corpus, "/query-sets"), body));
      if (!created) return;
      this.form = { name: "", queries: "" };
      await this.load();
      await this.open(created.name);
    },

    /** Open a set's history; one with a run still queued or running is read again every second. */
    async open(name) {
      clearTimeout(this.timer);
      const app = Alpine.store("app");
      const history = await app.run(() => call("GET", corpusPath(app.corpus, `/query-sets/${seg(name)}`)));
      if (!history) return;
      this.current = history;
      if (history.runs.some((r) => UNFINISHED.has(r.status))) {
        this.timer = setTimeout(() => this.current && this.current.query_set.name === name && this.open(name), 1000);
      }
    },

    async runNow() {
      const app = Alpine.store("app");
      const name = this.current.query_set.name;
      const queued = await app.run(() => call("POST", corpusPath(app.corpus, `/query-sets/${seg(name)}/runs`)));
      if (queued) await this.open(name);
    },

    async remove() {
      const app = Alpine.store("app");
      const name = this.current.query_set.name;
      const gone = await app.run(async () => {
        await call("DELETE", corpusPath(app.corpus, `/query-sets/${seg(name)}`));
        return true;
      });
      if (!gone) return;
      this.current = null;
      await this.load();
    },

    /** The runs newest first, with their MRR in words. */
    runs() {
      return this.current ? [...this.current.runs].reverse() : [];
    },

    latestChanges() {
      const done = this.current ? this.current.runs.filter((r) => r.status === "succeeded") : [];
      return done.length ? done[done.length - 1].changes : [];
    },

    value(number) {
      return typeof number === "number" ? number.toFixed(3) : "—";
    },

    drawHistory(canvas) {
      if (!this.current) return;
      const done = this.current.runs.filter((r) => r.status === "succeeded" && r.metrics && Object.keys(r.metrics).length);
      const labels = done.map((r, i) => `#${i + 1} ${r.trigger}`);
      draw(canvas, {
        type: "line",
        data: {
          labels,
          datasets: SERIES.map(([metric, color]) => ({
            label: metric, data: done.map((r) => r.metrics[metric] ?? null), borderColor: color, backgroundColor: color, pointRadius: 4,
          })),
        },
        options: { responsive: true, maintainAspectRatio: false, scales: { y: { min: 0, max: 1 } },
                   plugins: { title: { display: true, text: "the set's metrics, run by run" } } },
      });
    },
  };
}
