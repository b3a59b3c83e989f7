// Search and judge: rank the chosen corpus for a query (to a chosen depth, optionally filtered by a
// metadata field), mark the query's terms, judge each result on the corpus's scale (binary 1/0, or
// graded 0-3; u: unsure) as this key's judgement of the pair. Keyboard first: Enter searches and leaves
// the query box, j/k move, the grade keys judge, / (or a click) goes back to the box, Escape leaves it.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, corpusPath } from "./api.js";
import { segments } from "./highlight.js";
import { rankingLabel, rankingOptions } from "./ranking.js";
import { metadataItems, parseFilter, saveUrlState } from "./urlstate.js";

const TYPING = new Set(["INPUT", "TEXTAREA", "SELECT"]);
const GRADE_WORDS = { binary: ["not relevant", "relevant"], graded: ["0 not relevant", "1 related", "2 relevant", "3 same claim"] };

export function searchStore() {
  return {
    query: "",
    mode: "",
    alpha: 0.2,
    rerank: "",
    k: 10,
    filter: "",
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

    /** The corpus's judging scale: `binary` or `graded`. */
    get scale() {
      const current = Alpine.store("app").current;
      return (current && current.judgement_scale) || "binary";
    },
    /** The grades a judge may give on this corpus's scale. */
    get grades() {
      return this.scale === "graded" ? [0, 1, 2, 3] : [1, 0];
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
      const filter = parseFilter(this.filter);
      if (filter === undefined) {
        app.error = "filter: write it as field=value (for example lang=en)";
        return;
      }
      if (filter) body.filter = filter;
      const ranked = await app.run(() => call("POST", corpusPath(app.corpus, "/rank"), body));
      if (!ranked) return;
      await Alpine.store("match").decide(query, ranked, filter);
      this.results = ranked.results;
      this.ranking = ranked.ranking;
      this.model = ranked.model;
      this.searched = query;
      this.selected = 0;
      app.view = "search";
      // Out of the query box: the judging keys now judge instead of typing into it.
      const box = document.querySelector("[data-testid=query]");
      if (box && document.activeElement === box) box.blur();
      saveUrlState();
      await this.loadLabels();
    },

    /** The stored judgements of the searched query: document id -> the pair's aggregate label. */
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

    /** Store (or change) this key's judgement of a document for the searched query (null: unsure). */
    async judge(documentId, label) {
      const app = Alpine.store("app");
      if (!app.canWrite || !this.searched) return;
      const body = { query: this.searched, document_id: String(documentId) };
      if (label === null) body.unsure = true;
      else body.label = label;
      const judged = await app.run(() => call("PUT", corpusPath(app.corpus, "/pairs/judgement"), body));
      if (!judged) return;
      this.labels = { ...this.labels, [documentId]: judged.pair.label === null ? "unsure" : judged.pair.label };
      app.counts = judged.counts;
    },

    /** A grade in words on this corpus's scale. */
    gradeWord(grade) {
      if (grade === "unsure") return "unsure";
      if (this.scale === "graded") return GRADE_WORDS.graded[Math.round(grade)] || String(grade);
      return grade > 0 ? "relevant" : "not relevant";
    },

    judgement(documentId) {
      const label = this.labels[documentId];
      return label === undefined ? "" : this.gradeWord(label);
    },

    segments(text) {
      return segments(text, this.searched);
    },

    /** A result's metadata as chips: {key, text, href} (href for http(s) URLs, shown as links). */
    metadata(result) {
      return metadataItems(result.metadata);
    },

    onKey(event) {
      const app = Alpine.store("app");
      if (!app.me || event.ctrlKey || event.metaKey || event.altKey) return;
      if (TYPING.has(event.target.tagName)) {
        if (event.key === "Escape") {
          event.preventDefault(); // a search box would clear itself: Escape only leaves it
          event.target.blur();
        }
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
      } else if (event.key === "u") {
        this.judge(this.results[this.selected].id, null);
      } else if (/^[0-9]$/.test(event.key) && this.grades.includes(Number(event.key))) {
        this.judge(this.results[this.selected].id, Number(event.key));
      }
    },
  };
}
