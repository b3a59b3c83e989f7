// Match decisions: the desk's question (checked before? yes / maybe / no) answered for each search by
// POST /match, and the Match view: the corpus's policy, its calibration from the judged pairs, and the
// forward curves that show what moving a threshold would do.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, corpusPath } from "./api.js";
import { COLORS, draw } from "./charts.js";

const POLL_MS = 1500;
const POLICY_FIELDS = ["match_precision", "new_precision", "absent_share", "min_words", "review_candidates", "recency_days", "date_field"];
export const HEADLINE = {
  match: "Checked before",
  review: "Maybe checked before: review the candidates",
  new: "No earlier check found",
};

/** A percentage for people: 0.957 -> "95.7%", null -> "n/a". */
export function percent(value) {
  return typeof value === "number" ? `${(100 * value).toFixed(1)}%` : "n/a";
}

/** The policy form's body: blank fields left out (the stored value stays), numbers as numbers. */
export function policyBody(form) {
  const body = {};
  for (const name of POLICY_FIELDS) {
    const value = form[name];
    if (value === "" || value === null || value === undefined) continue;
    body[name] = name === "date_field" ? String(value) : Number(value);
  }
  return body;
}

export function matchStore() {
  return {
    decision: null, // the searched text's /match answer
    uncalibrated: "", // why there is no decision (the corpus is not calibrated for the served model)
    policy: null,
    form: {},
    calibration: null,
    calibrating: false,
    percent,

    reset() {
      this.decision = null;
      this.uncalibrated = "";
      this.policy = null;
      this.calibration = null;
    },

    /** Ask the corpus's decision for a searched text. Only a corpus calibrated for the served model has
     * one, and then its ranked results carry probabilities: without them, say so (no failing request). */
    async decide(text, ranked) {
      const app = Alpine.store("app");
      this.decision = null;
      this.uncalibrated = "";
      if (!ranked.results.some((r) => typeof r.probability === "number")) {
        this.uncalibrated = "not calibrated";
        return;
      }
      const body = { text, include_metadata: false };
      this.decision = (await app.run(() => call("POST", corpusPath(app.corpus, "/match"), body))) || null;
    },

    headline() {
      return this.decision ? HEADLINE[this.decision.decision] : "";
    },

    /** The Match view opened: the policy and the stored calibration (404: none yet). */
    async load() {
      const app = Alpine.store("app");
      if (!app.corpus) return;
      const policy = await app.run(() => call("GET", corpusPath(app.corpus, "/match-policy")));
      if (!policy) return;
      this.policy = policy;
      this.form = Object.fromEntries(POLICY_FIELDS.map((name) => [name, policy[name] ?? ""]));
      this.calibration = null;
      if (!policy.calibrated_for) return; // never calibrated: nothing to read
      this.calibration = (await app.run(() => call("GET", corpusPath(app.corpus, "/match/calibration")))) || null;
    },

    async savePolicy() {
      const app = Alpine.store("app");
      const saved = await app.run(() => call("PUT", corpusPath(app.corpus, "/match-policy"), policyBody(this.form)));
      if (saved) this.policy = saved;
    },

    /** Calibrate with the form's policy: the report at once, or (a large corpus: 202) once its job stores it. */
    async calibrate() {
      const app = Alpine.store("app");
      const before = this.calibration ? this.calibration.calibrated_at : null;
      this.calibrating = true;
      try {
        const path = corpusPath(app.corpus, "/match/calibrate");
        const answer = await app.run(() => call("POST", path, policyBody(this.form)));
        if (answer && answer.kind && answer.thresholds) {
          this.calibration = answer;
        } else if (answer) {
          await this.awaitCalibration(before);
        }
        await this.load();
      } finally {
        this.calibrating = false;
      }
    },

    async awaitCalibration(before) {
      const app = Alpine.store("app");
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        // The policy names a model once a calibration is stored (no 404 to read before that).
        const policy = await app.run(() => call("GET", corpusPath(app.corpus, "/match-policy")));
        if (!policy) return;
        if (!policy.calibrated_for) continue;
        const found = await app.run(() => call("GET", corpusPath(app.corpus, "/match/calibration")));
        if (!found || found.calibrated_at !== before) return;
      }
    },

    /** Forward precision and coverage of `match` and of `new` against the threshold, chosen ones marked. */
    drawCurves(canvas) {
      if (!this.calibration || !this.calibration.curves) return;
      const c = this.calibration.curves;
      const line = (label, values, color, dash) => ({
        label,
        data: c.threshold.map((x, i) => ({ x, y: values[i] })),
        borderColor: color,
        backgroundColor: color,
        borderDash: dash ? [4, 3] : [],
        pointRadius: 0,
        spanGaps: false,
      });
      const mark = (label, x, color) => ({
        label,
        data: [{ x, y: 0 }, { x, y: 1 }],
        borderColor: color,
        borderWidth: 1,
        pointRadius: 0,
      });
      const chosen = this.calibration.thresholds;
      draw(canvas, {
        type: "line",
        data: {
          datasets: [
            line("match precision", c.match_precision, COLORS.left, false),
            line("match coverage", c.match_coverage, COLORS.left, true),
            line("new precision", c.new_precision, COLORS.right, false),
            line("new coverage", c.new_coverage, COLORS.right, true),
            mark(`match at ${chosen.match.toFixed(2)}`, chosen.match, COLORS.metric),
            mark(`new below ${chosen.new.toFixed(2)}`, chosen.new, COLORS.loss),
          ],
        },
        options: {
          responsive: true,
          maintainAspectRatio: false,
          scales: {
            x: { type: "linear", min: 0, max: 1, title: { display: true, text: "threshold on the probability" } },
            y: { min: 0, max: 1 },
          },
        },
      });
    },
  };
}
