// Duplicates: incoming texts (pasted, or a .txt / .jsonl file read in the browser), each with its nearest
// documents and which of them pass the corpus's threshold (calibrated, else the service default).
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, corpusPath } from "./api.js";

const PER_REQUEST = 100; // PAIRANK_MAX_TEXTS_PER_REQUEST's default; a lower setting answers 413, shown

/** Texts of an uploaded file: JSON lines take each object's `text`, anything else one text per line. */
export function textsOf(content, name) {
  const lines = content.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  if (!/\.jsonl?$/i.test(name || "")) return lines;
  return lines.map((line) => {
    const value = JSON.parse(line);
    return typeof value === "string" ? value : value.text;
  }).filter((t) => typeof t === "string" && t.trim());
}

export function duplicatesStore() {
  return {
    text: "",
    k: 5,
    results: [],
    threshold: null,
    source: "",
    model: "",
    on: "cosine",
    judged: {}, // "text\u0000id" -> 1 (same claim) or 0 (not the same), as stored

    async upload(event) {
      const file = event.target.files && event.target.files[0];
      if (!file) return;
      const app = Alpine.store("app");
      await app.run(async () => {
        try {
          this.text = textsOf(await file.text(), file.name).join("\n");
        } catch (error) {
          throw new Error(`file: ${file.name} is not JSON lines with a "text" field (${error.message})`);
        }
      });
    },

    async check() {
      const app = Alpine.store("app");
      const texts = this.text.split(/\r?\n/).map((t) => t.trim()).filter(Boolean);
      if (!texts.length) {
        app.error = "texts: paste or upload at least one text";
        return;
      }
      const path = corpusPath(app.corpus, "/duplicates");
      const k = Number(this.k) || 5;
      const found = await app.run(async () => {
        const results = [];
        let passing = null;
        for (let start = 0; start < texts.length; start += PER_REQUEST) {
          const chunk = texts.slice(start, start + PER_REQUEST);
          // Above the threshold (what the corpus calls duplicates), and the k nearest whatever the cosine.
          passing = await call("POST", path, { texts: chunk, k });
          const nearest = await call("POST", path, { texts: chunk, k, threshold: -1 });
          nearest.results.forEach((result, i) => {
            const passed = new Set(passing.results[i].duplicates.map((d) => d.id));
            const matches = result.duplicates.map((d) => ({ ...d, passes: passed.has(d.id) }));
            results.push({ text: result.text, matches, count: passed.size });
          });
        }
        return { results, passing };
      });
      if (!found) return;
      this.results = found.results;
      this.threshold = found.passing.threshold;
      this.source = found.passing.threshold_source;
      this.model = found.passing.model;
      this.on = found.passing.threshold_on || "cosine";
    },

    /** What decides: the corpus's match policy (on the probability), its calibrated cosine, or the default. */
    thresholdLabel() {
      const source = {
        policy: "the corpus's match policy: its auto-match threshold on the calibrated probability",
        corpus: "calibrated for this corpus and model",
        request: "asked for",
      }[this.source] || "the service default: calibrate the corpus to set its own";
      return `threshold ${this.threshold.toFixed(3)} on the ${this.on} (${source}) · ${this.model}`;
    },

    pressed(text, documentId, label) {
      return this.judged[`${text}\u0000${documentId}`] === label;
    },

    /** Store whether an incoming text and a document are the same claim, as a judged pair of the corpus. */
    async judge(text, documentId, label) {
      const app = Alpine.store("app");
      const body = { query: text, document_id: String(documentId), label };
      const judged = await app.run(() => call("PUT", corpusPath(app.corpus, "/pairs/judgement"), body));
      if (!judged) return;
      this.judged = { ...this.judged, [`${text}\u0000${documentId}`]: judged.pair.label };
      app.counts = judged.counts;
    },

    cosine(match) {
      const value = match.dense_score !== undefined ? match.dense_score : match.score;
      return value.toFixed(3);
    },
  };
}
