// What the address bar keeps (the corpus, the query, the tab: ?corpus=…&q=…&view=…), so a reload or a
// shared link reopens the same view after sign-in; and small parsers of the search toolbar's fields.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";

/** Write the current corpus, searched query and view into the address (no new history entry). */
export function saveUrlState() {
  const app = Alpine.store("app");
  const search = Alpine.store("search");
  const params = new URLSearchParams();
  if (app.corpus) params.set("corpus", app.corpus);
  if (search.searched) params.set("q", search.searched);
  if (app.view && app.view !== "search") params.set("view", app.view);
  const query = params.toString();
  history.replaceState(null, "", `${location.pathname}${query ? `?${query}` : ""}`);
}

/** The state a link carries: {corpus, q, view} (each "" when absent). */
export function readUrlState() {
  const params = new URLSearchParams(location.search);
  return { corpus: params.get("corpus") || "", q: params.get("q") || "", view: params.get("view") || "" };
}

/** A metadata filter typed as `field=value` (several joined by `,`): {field: value}; null when empty,
 *  undefined when malformed. Numbers and true/false are sent as such. */
export function parseFilter(text) {
  const trimmed = String(text || "").trim();
  if (!trimmed) return null;
  const filter = {};
  for (const part of trimmed.split(",")) {
    const at = part.indexOf("=");
    if (at < 1) return undefined;
    const key = part.slice(0, at).trim();
    const raw = part.slice(at + 1).trim();
    if (!key || !raw) return undefined;
    let value = raw;
    if (raw === "true" || raw === "false") value = raw === "true";
    else if (/^-?\d+(\.\d+)?$/.test(raw)) value = Number(raw);
    filter[key] = value;
  }
  return filter;
}

/** Metadata as chips: {key, text, href}; an http(s) URL value is a link (opened in a new tab). */
export function metadataItems(metadata) {
  return Object.entries(metadata || {}).map(([key, value]) => {
    const isUrl = typeof value === "string" && /^https?:\/\/\S+$/i.test(value);
    return { key, text: isUrl ? `${key}: ${value}` : `${key}: ${JSON.stringify(value)}`, href: isUrl ? value : "" };
  });
}
