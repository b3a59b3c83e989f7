// The gate's report and a job's progress in plain words: what the gate decided, why, and what to do
// next; how far a job is and about how long it has left.

const num = (v) => (typeof v === "number" ? v.toFixed(3) : "?");
const signed = (v) => (typeof v === "number" ? `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(3)}` : "?");

/** The gate's verdict: {passed, text}, `text` saying why and the next step. */
export function gateVerdict(gate) {
  if (!gate) return null;
  const verdict = plainVerdict(gate);
  const served = scoredAs(gate);
  return served ? { ...verdict, text: `${verdict.text} (Both were scored as the corpus serves them: ${served}.)` } : verdict;
}

/** Every pipeline a dev-set gate compared, best first: {name, pipeline, value, chosen}; [] for other gates. */
export function gateArms(gate) {
  if (!gate || !gate.arms) return [];
  const metric = gate.metric;
  const rows = Object.entries(gate.arms).map(([name, arm]) => {
    const stage = arm.rerank ? ` + re-ranker top ${arm.rerank.k}, weight ${arm.rerank.weight}` : "";
    const value = arm.means ? arm.means[metric] : undefined;
    return { name, pipeline: `${arm.ranking}${stage}`, value: `${metric} ${num(value)}`, chosen: name === gate.chosen, score: value };
  });
  return rows.sort((a, b) => (b.score ?? -1) - (a.score ?? -1));
}

/** The pipeline the gate scored: the served ranking of a cross-validated gate, or each model's on the dev set. */
export function scoredAs(gate) {
  if (gate.ranking) return gate.ranking;
  if (gate.candidate_ranking) return `candidate ${gate.candidate_ranking}, active ${gate.active_ranking}`;
  return "";
}

function plainVerdict(gate) {
  const metric = gate.metric || "the metric";
  const active = gate.active && gate.active[metric];
  const candidate = gate.candidate && gate.candidate[metric];
  const band = gate.noise && typeof gate.noise.noise_band === "number" ? gate.noise.noise_band : null;
  if (gate.improved) {
    const next = gate.activation === "queued"
      ? "It is being activated now; every corpus will rank with it."
      : "Next: activate it below when you want it to serve.";
    const stack = gate.chosen && gate.arms && gate.arms[gate.chosen] && gate.arms[gate.chosen].rerank
      ? " with its new re-ranker, which beat the new model alone too: the two are activated, and rolled back, together"
      : "";
    return { passed: true, text: `Passed: the candidate${stack} ranks the held-out queries better (${metric} ${num(candidate)} against ${num(active)}, ${signed(gate.delta)}). ${next}` };
  }
  if (typeof active === "number" && active >= 0.999) {
    return { passed: false, text: `Not passed: the current model already ranks every held-out query's relevant document first (${metric} ${num(active)}), so no candidate can do better on them. Next: judge harder queries (ones it gets wrong) and retrain.` };
  }
  if (typeof gate.delta === "number" && gate.delta < 0) {
    return { passed: false, text: `Not passed: the candidate ranks worse (${metric} ${num(candidate)} against ${num(active)}, ${signed(gate.delta)}). Keep the current model. Next: check the newest judgements for mistakes, or judge more queries, then retrain.` };
  }
  const noise = band !== null ? ` within the noise band (±${band.toFixed(3)})` : " too small";
  return { passed: false, text: `Not passed: the difference (${metric} ${signed(gate.delta)}) is${noise}: the held-out queries cannot tell the two models apart. Next: judge more queries so the gate can tell, then retrain.` };
}

/** How far a running job is, 0 to 1, from its progress (training steps, fold runs, written items). */
export function fraction(progress) {
  const p = progress || {};
  if (p.done !== undefined && p.total) return Math.min(1, p.done / p.total);
  if (p.step !== undefined && p.total_steps) {
    const within = Math.min(1, p.step / p.total_steps);
    return p.run && p.runs ? Math.min(1, (p.run - 1 + within) / p.runs) : within;
  }
  return null;
}

/** "42% · about 1 min 10 s left" for a running job (started at `startedAt`), or "". */
export function progressText(job, now = Date.now()) {
  if (!job || (job.status !== "running" && job.status !== "queued")) return "";
  const done = fraction(job.progress);
  if (done === null) return "";
  const percent = `${Math.floor(done * 100)}%`;
  const started = job.started_at ? Date.parse(job.started_at) : NaN;
  if (!(done > 0.02) || Number.isNaN(started)) return percent;
  const left = Math.max(0, ((now - started) / 1000) * (1 - done) / done);
  const minutes = Math.floor(left / 60);
  const seconds = Math.round(left % 60);
  return `${percent} · about ${minutes ? `${minutes} min ` : ""}${seconds} s left`;
}
