// Bringing data in: create an empty corpus; import a corpus from a JSONL or CSV file (named after the
// file, a claim corpus unless another kind is chosen; CSV columns id, text, language?, the rest metadata)
// as a bulk import followed to its end; upload judged pairs (JSONL or CSV) as this key's judgements.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, corpusPath, seg, upload } from "./api.js";

const FINAL = new Set(["succeeded", "failed", "cancelled"]);

/** A corpus name from a file name: its stem, characters the API refuses made `-`. */
export function corpusName(fileName) {
  const stem = String(fileName || "").replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9_.-]+/g, "-");
  return stem.replace(/^[^A-Za-z0-9]+/, "").slice(0, 100) || "imported";
}

/** Rows of CSV text (RFC 4180: quoted fields, doubled quotes, newlines inside quotes). */
export function csvRows(text) {
  const rows = [];
  let row = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i += 1; }
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { row.push(field); field = ""; }
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i += 1;
      row.push(field); rows.push(row); row = []; field = "";
    } else field += c;
  }
  if (field || row.length) { row.push(field); rows.push(row); }
  return rows.filter((r) => r.some((value) => value.trim()));
}

/** A CSV file's documents as JSON lines: `id` and `text` columns, `language` if present, the rest metadata. */
export function csvToJsonl(text) {
  const [header, ...rows] = csvRows(text);
  const columns = (header || []).map((h) => h.trim());
  if (!columns.includes("id") || !columns.includes("text")) {
    throw new Error("file: a CSV file needs a header with id and text columns");
  }
  return rows.map((values, n) => {
    const record = { metadata: {} };
    columns.forEach((column, i) => {
      const value = values[i] ?? "";
      if (column === "id" || column === "text" || column === "language") { if (value) record[column] = value; }
      else if (value !== "") record.metadata[column] = value;
    });
    if (!record.id || !record.text) throw new Error(`file: line ${n + 2} has no id or no text`);
    if (!Object.keys(record.metadata).length) delete record.metadata;
    return JSON.stringify(record);
  }).join("\n") + "\n";
}

export function dataStore() {
  return {
    create: { name: "", kind: "claim", scale: "binary" },
    file: null,
    importName: "",
    importKind: "claim",
    importJob: null,
    judgedFile: null,
    imported: null,

    async createCorpus(name = this.create.name.trim(), kind = this.create.kind, scale = this.create.scale) {
      const app = Alpine.store("app");
      const created = await app.run(() => call("POST", "/v1/corpora", { name, kind, judgement_scale: scale }));
      if (!created) return false;
      this.create.name = "";
      await app.loadCorpora();
      await app.chooseCorpus(name);
      return true;
    },

    chooseFile(event) {
      this.file = (event.target.files && event.target.files[0]) || null;
      this.importJob = null;
      if (this.file) this.importName = corpusName(this.file.name);
    },

    /** Create the corpus (unless this key already has it), upload the file, follow the import. */
    async startImport() {
      const app = Alpine.store("app");
      if (!this.file) { app.error = "file: choose a JSONL or CSV file first"; return; }
      const name = this.importName.trim();
      const content = await this.file.text();
      const lines = await app.run(async () => (/\.csv$/i.test(this.file.name) ? csvToJsonl(content) : content));
      if (lines === undefined) return;
      if (!app.corpora.some((c) => c.name === name)) {
        const created = await app.run(() => call("POST", "/v1/corpora", { name, kind: this.importKind }));
        if (!created) return;
      }
      const job = await app.run(() => upload(corpusPath(name, "/imports"), lines, "application/x-ndjson"));
      if (!job) return;
      this.importJob = job;
      await this.follow(name, job.id);
    },

    async follow(name, id) {
      const app = Alpine.store("app");
      while (this.importJob && this.importJob.id === id && !FINAL.has(this.importJob.status)) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const job = await app.run(() => call("GET", corpusPath(name, `/imports/${seg(id)}`)));
        if (!job) return;
        this.importJob = job;
      }
      await app.loadCorpora();
      if (this.importJob && this.importJob.status === "succeeded") await app.chooseCorpus(name);
    },

    importProgress() {
      const job = this.importJob;
      if (!job) return "";
      const p = job.progress || {};
      const done = p.done !== undefined && p.total ? ` · ${p.done}/${p.total} documents (${Math.floor((100 * p.done) / p.total)}%)` : "";
      return `import ${job.status}${done}${job.error ? ` · ${job.error}` : ""}`;
    },

    /** Upload judged pairs (JSONL or CSV: query, document_id, label, note?) as this key's judgements. */
    async importJudged(event) {
      const app = Alpine.store("app");
      const file = event.target.files && event.target.files[0];
      if (!file || !app.corpus) return;
      const text = await file.text();
      const format = /\.csv$/i.test(file.name) ? "csv" : "jsonl";
      const done = await app.run(() => call("POST", corpusPath(app.corpus, "/judgements/import"), { format, text }));
      event.target.value = "";
      if (!done) return;
      this.imported = done;
      await app.loadCounts();
    },
  };
}
