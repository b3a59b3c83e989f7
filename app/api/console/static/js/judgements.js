// Judgements: every judge's judgements of the chosen corpus (filter by judge, query, disagreement),
// your own edited or deleted in place, the judges' agreement (Cohen's kappa per pair of judges,
// Krippendorff's alpha), the judged queries to review, and the exports (TREC qrels, JSONL, CSV).
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, corpusPath, fetchText } from "./api.js";

const EXPORTS = { trec: ["qrels.txt", "text/plain"], jsonl: ["queries.jsonl", "application/x-ndjson"], csv: ["judgements.csv", "text/csv"] };

export function judgementsStore() {
  return {
    rows: [],
    nextCursor: null,
    agreement: null,
    filter: { judged_by: "", query: "", disagreement: false },
    editing: null,

    /** How the API records this key as a judge (GET /v1/whoami's key id, else the admin or anonymous). */
    get me() {
      const me = Alpine.store("app").me;
      if (!me) return "";
      return me.key_id || (me.scope === "admin" ? "admin-key" : "anonymous");
    },

    params(cursor) {
      const params = new URLSearchParams({ limit: "100" });
      if (this.filter.judged_by.trim()) params.set("judged_by", this.filter.judged_by.trim());
      if (this.filter.query.trim()) params.set("query", this.filter.query.trim());
      if (this.filter.disagreement) params.set("disagreement", "true");
      if (cursor) params.set("cursor", cursor);
      return params.toString();
    },

    async load() {
      const app = Alpine.store("app");
      if (!app.corpus) return;
      this.editing = null;
      const [page, agreement] = await Promise.all([
        app.run(() => call("GET", corpusPath(app.corpus, `/judgements?${this.params(null)}`))),
        app.run(() => call("GET", corpusPath(app.corpus, "/judgements/agreement"))),
      ]);
      if (page) {
        this.rows = page.judgements;
        this.nextCursor = page.next_cursor;
      }
      if (agreement) this.agreement = agreement;
    },

    async more() {
      const app = Alpine.store("app");
      const page = await app.run(() => call("GET", corpusPath(app.corpus, `/judgements?${this.params(this.nextCursor)}`)));
      if (!page) return;
      this.rows = [...this.rows, ...page.judgements];
      this.nextCursor = page.next_cursor;
    },

    /** The judged queries of the rows shown: {query, judgements, disagreements}. */
    queries() {
      const byQuery = new Map();
      for (const row of this.rows) {
        const entry = byQuery.get(row.query) || { query: row.query, judgements: 0, disagreements: 0 };
        entry.judgements += 1;
        if (row.disagreement) entry.disagreements += 1;
        byQuery.set(row.query, entry);
      }
      return [...byQuery.values()];
    },

    grade(row) {
      return row.unsure ? "unsure" : String(row.grade);
    },

    startEdit(row) {
      this.editing = { id: row.id, label: row.unsure ? "unsure" : String(row.grade), note: row.note || "" };
    },

    async saveEdit() {
      const app = Alpine.store("app");
      const edit = this.editing;
      const body = edit.label === "unsure" ? { unsure: true } : { label: Number(edit.label) };
      if (edit.note.trim()) body.note = edit.note.trim();
      const changed = await app.run(() => call("PATCH", corpusPath(app.corpus, `/judgements/${edit.id}`), body));
      if (!changed) return;
      this.editing = null;
      await this.load();
      await app.loadCounts();
    },

    async remove(row) {
      const app = Alpine.store("app");
      const gone = await app.run(async () => {
        await call("DELETE", corpusPath(app.corpus, `/judgements/${row.id}`));
        return true;
      });
      if (!gone) return;
      await this.load();
      await app.loadCounts();
    },

    /** Open a judged query in Search & judge. */
    async review(query) {
      const search = Alpine.store("search");
      search.query = query;
      await search.search();
    },

    kappa(value) {
      return typeof value === "number" ? value.toFixed(3) : "too few shared pairs";
    },

    /** Download an export of the corpus's judgements (fetched with the key, saved as a file). */
    async download(format) {
      const app = Alpine.store("app");
      const text = await app.run(() => fetchText(corpusPath(app.corpus, `/judgements/export?format=${format}`)));
      if (text === undefined) return;
      const [suffix, type] = EXPORTS[format];
      const link = document.createElement("a");
      link.href = URL.createObjectURL(new Blob([text], { type }));
      link.download = `${app.corpus}-${suffix}`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 1000);
    },
  };
}
