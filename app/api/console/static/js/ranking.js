// The ranking of a request, one way for the search toolbar and both Compare sides: its options from the
// chosen {mode, alpha, rerank} (the first stage, then the re-ranking stage), the Re-rank choices a
// corpus and a key allow, and a ranking as a response states it, in words.

/** The Re-rank choice that turns the corpus's stage off for a request ("" keeps the corpus's). */
export const RERANK_OFF = "off";

/** The body fields of a request's ranking; unset choices take the corpus's own (README, "Re-ranking"). */
export function rankingOptions({ mode, alpha, rerank }) {
  const options = {};
  if (mode) options.mode = mode;
  if (mode === "hybrid") options.alpha = Number(alpha);
  if (rerank === RERANK_OFF) options.rerank = { enabled: false };
  else if (rerank) options.rerank = { model: rerank }; // a cross-encoder version (an admin key)
  return options;
}

/** A re-ranking stage ({model, k, weight}) in words: "re-ranked top 20 by X" (and its weight below 1). */
export function stageLabel(stage) {
  if (!stage) return "";
  const blend = stage.weight < 1 ? ` (weight ${stage.weight})` : "";
  return `re-ranked top ${stage.k} by ${stage.model}${blend}`;
}

/** How a response says it ranked: "dense", "hybrid a=0.2 · re-ranked top 20 by X". */
export function rankingLabel(ranking) {
  if (!ranking) return "";
  const first = ranking.mode === "hybrid"
    ? (ranking.fusion === "rrf" ? "hybrid rrf" : `hybrid a=${ranking.alpha}`)
    : ranking.mode;
  return ranking.rerank ? `${first} · ${stageLabel(ranking.rerank)}` : first;
}

/**
 * The Re-rank select's options for a corpus (an item of GET /v1/corpora): the corpus's own stage (named),
 * off, and for an admin every registered cross-encoder (GET /admin/models). Empty when there is nothing
 * to choose: the corpus has no stage and no cross-encoder may be named.
 */
export function rerankChoices(corpus, models, isAdmin) {
  const stage = corpus && corpus.ranking ? corpus.ranking.rerank : null;
  const encoders = isAdmin ? models.filter((m) => m.kind === "cross-encoder") : [];
  if (!stage && !encoders.length) return [];
  return [
    { value: "", label: `corpus default (${stage ? stageLabel(stage) : "none"})` },
    { value: RERANK_OFF, label: "off" },
    ...encoders.map((m) => ({ value: m.version, label: `re-rank with ${m.version}` })),
  ];
}
