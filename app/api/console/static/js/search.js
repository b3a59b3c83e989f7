// Search and judge: rank the chosen corpus for a query, mark the query's terms, judge each result
// relevant (1) or not (0) as a pair of the corpus. Keyboard first: Enter searches, j/k move, 1/0 judge,
// / jumps to the query.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, corpusPath } from "./api.js";
import { segments } from "./highlight.js";
import { rankingLabel, rankingOptions } from "./ranking.js";

const TYPING = new Set(["INPUT", "TEXTAREA", "SELECT"]);

export function searchStore() {
  return {
    query: "",
    mode: "",
    alpha: 0.2,
    rerank: "",
    k: 10,
    results: [],
    ranking: null,
    model: "",
    searched: "",
    labels: {},
    selected: 0,

    reset() {
      this.results = [];
      this.ranking = null;
      this.model = "";
      this.searched = "";
      this.labels = {};
      this.selected = 0;
    },

    /** The ranking options of a request: the corpus's own unless a mode or a Re-rank choice is made. */
    options() {
      return rankingOptions(this);
    },

    /** How the shown results were ranked: "dense · re-ranked top 20 by X". */
    rankingLabel() {
      return rankingLabel(this.ranking);
    },

    async search() {
      const app = Alpine.store("app");
      const query = this.query.trim();
      if (!query) {
        app.error = "query: type a query to search for";
        return;
      }
      const body = { query, k: Number(this.k) || 10, include_metadata: true, ...this.options() };
      const ranked = await app.run(() => call("POST", corpusPath(app.corpus, "/rank"), body));
      if (!ranked) return;
      await Alpine.store("match").decide(query, ranked);
      this.results = ranked.results;
      this.ranking = ranked.ranking;
      this.model = ranked.model;
      this.searched = query;
      this.selected = 0;
      app.view = "search";
      await this.loadLabels();
    },

    /** The stored judgements of the searched query: document id -> label. */
    async loadLabels() {
      const app = Alpine.store("app");
      const path = corpusPath(app.corpus, `/pairs?limit=1000&query=${encodeURIComponent(this.searched)}`);
      const page = await app.run(() => call("GET", path));
      if (!page) return;
      const labels = {};
      for (const pair of page.pairs) if (pair.document_id !== null) labels[pair.document_id] = pair.label;
      this.labels = labels;
      app.counts = page.counts;
    },

    /** Store (or change) the judgement of a document for the searched query. */
    async judge(documentId, label) {
      const app = Alpine.store("app");
      if (!app.canWrite || !this.searched) return;
      const body = { query: this.searched, document_id: String(documentId), label };
      const judged = await app.run(() => call("PUT", corpusPath(app.corpus, "/pairs/judgement"), body));
      if (!judged) return;
      this.labels = { ...this.labels, [documentId]: judged.pair.label };
      app.counts = judged.counts;
    },

    judgement(documentId) {
      const label = this.labels[documentId];
      if (label === undefined) return "";
      return label > 0 ? "relevant" : "not relevant";
    },

    segments(text) {
      return segments(text, this.searched);
    },

    metadata(result) {
      return Object.entries(result.metadata || {}).map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
    },

    onKey(event) {
      const app = Alpine.store("app");
      if (!app.me || event.ctrlKey || event.metaKey || event.altKey) return;
      if (TYPING.has(event.target.tagName)) {
        if (event.key === "Escape") event.target.blur();
        return;
      }
      if (event.key === "/") {
        event.preventDefault();
        document.querySelector("[data-testid=query]")?.focus();
        return;
      }
      if (app.view !== "search" || !this.results.length) return;
      if (event.key === "j" || event.key === "k") {
        const step = event.key === "j" ? 1 : -1;
        this.selected = Math.min(this.results.length - 1, Math.max(0, this.selected + step));
        Alpine.nextTick(() => document.querySelector(".result.selected")?.scrollIntoView({ block: "nearest" }));
      } else if (event.key === "1" || event.key === "0") {
        this.judge(this.results[this.selected].id, event.key === "1" ? 1 : 0);
      }
    },
  };
}
