// Query terms marked in result texts, as segments rendered with x-text (never as HTML): a word matches
// a query term when they are equal ignoring case, or share a stem-like prefix (5+ letters: "vaccines"
// and "vaccinated"), roughly what the BM25 side's stemming matches.

const WORD = /[\p{L}\p{N}]+/gu;
const STOP = new Set(["the", "and", "for", "are", "was", "that", "this", "with", "not", "but", "you", "has", "have", "its", "from", "into", "about"]);

/** The query's terms worth marking: lower-cased words of 2+ characters, stop words left out. */
export function terms(query) {
  const found = (query || "").toLowerCase().match(WORD) || [];
  return [...new Set(found.filter((t) => t.length >= 2 && !STOP.has(t)))];
}

function stem(word) {
  return word.length >= 5 ? word.slice(0, 5) : word;
}

function matches(word, wanted) {
  const lower = word.toLowerCase();
  return wanted.some((t) => t === lower || (t.length >= 5 && lower.length >= 5 && stem(t) === stem(lower)));
}

/** [{text, hit}] covering `text` in order; hits are the words matching a query term. */
export function segments(text, query) {
  const wanted = terms(query);
  if (!wanted.length || !text) return [{ text: text || "", hit: false }];
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(WORD)) {
    if (!matches(match[0], wanted)) continue;
    if (match.index > last) parts.push({ text: text.slice(last, match.index), hit: false });
    parts.push({ text: match[0], hit: true });
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), hit: false });
  return parts;
}
