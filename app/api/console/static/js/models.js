// Retraining and models (admin keys): start a retraining from the judged pairs, follow its job live
// (stage, epochs, dev metric, loss curve) by polling GET /admin/jobs/{id}, read the gate's report, and
// activate a version or roll back to the previous one (each an activation job, followed the same way).
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, seg } from "./api.js";
import { curve, draw } from "./charts.js";
import { gateArms, gateVerdict, progressText } from "./verdict.js";

const FINAL = new Set(["succeeded", "failed", "cancelled"]);
const POLL_MS = 1000;

export function modelsStore() {
  return {
    // The console's defaults: nothing activates without a look at the gate (the API's default stays).
    form: { epochs: "", auto_activate: false, require_significant: true, cross_validation: "auto", min_improvement: "",
            reranker: "default" },
    confirming: false,
    pendingActivation: null,
    job: null,
    jobs: [],
    list: [],
    timer: null,

    reset() {
      clearTimeout(this.timer);
      this.timer = null;
      this.job = null;
      this.jobs = [];
      this.list = [];
    },

    /** The versions that can serve (compare sides, activation): cross-encoders only re-rank. */
    get biEncoders() {
      return this.list.filter((m) => m.kind !== "cross-encoder");
    },

    get running() {
      return this.job !== null && !FINAL.has(this.job.status);
    },

    async load() {
      const app = Alpine.store("app");
      if (!app.isAdmin) return;
      const [models, jobs] = await Promise.all([
        app.run(() => call("GET", "/admin/models")),
        app.run(() => call("GET", "/admin/jobs?limit=20")),
      ]);
      if (models) this.list = models.models;
      if (jobs) this.jobs = jobs.jobs;
      if (this.job === null && jobs) {
        const latest = jobs.jobs.find((j) => j.kind === "retrain" || j.kind === "activate");
        if (latest) this.follow(latest);
      }
    },

    /** Retrain (the toolbar's button): show the confirm step with the settings first. */
    askRetrain() {
      const app = Alpine.store("app");
      app.show("models");
      this.confirming = true;
    },

    /** The retraining request the confirm step shows and sends. */
    retrainBody() {
      const app = Alpine.store("app");
      const body = { corpus: app.corpus, auto_activate: this.form.auto_activate,
                     require_significant: this.form.require_significant,
                     cross_validation: this.form.cross_validation };
      if (String(this.form.epochs).trim()) body.epochs = Number(this.form.epochs);
      if (String(this.form.min_improvement).trim()) body.min_improvement = Number(this.form.min_improvement);
      if (this.form.reranker !== "default") body.reranker = this.form.reranker === "on" ? {} : null;
      return body;
    },

    async retrain() {
      const app = Alpine.store("app");
      this.confirming = false;
      const created = await app.run(() => call("POST", "/admin/retrain", this.retrainBody()));
      if (!created) return;
      app.view = "models";
      this.follow({ id: created.job_id, kind: "retrain", status: created.status, progress: null });
    },

    /** Whether a version's gate said no (activating it anyway asks first). */
    failedGate(model) {
      const gate = model && model.dev_metrics && model.dev_metrics.gate;
      return Boolean(gate) && gate.improved === false;
    },

    /** Activate a version; one that failed its gate is held for a confirmation first. */
    async activate(version, confirmed = false) {
      const model = this.list.find((m) => m.version === version);
      if (!confirmed && this.failedGate(model)) {
        this.pendingActivation = model;
        return;
      }
      this.pendingActivation = null;
      const app = Alpine.store("app");
      const job = await app.run(() => call("POST", `/admin/models/${seg(version)}/activate`));
      if (job) this.follow(job);
    },

    /** The rollback target: the version that served most recently before the active one, leaving out
     *  versions that failed their gate (rolling "back" to a rejected candidate is not a rollback). */
    get previous() {
      const others = this.list.filter((m) => !m.is_active && m.activated_at && m.kind !== "cross-encoder" && !this.failedGate(m));
      others.sort((a, b) => (a.activated_at < b.activated_at ? 1 : -1));
      return others.length ? others[0] : null;
    },

    /** The gate's verdict in plain words, with the next step. */
    verdict() {
      return gateVerdict(this.job && this.job.gate);
    },

    /** Every pipeline the gate compared (active, new bi-encoder, with the new re-ranker), best first. */
    arms() {
      return gateArms(this.job && this.job.gate);
    },

    /** "42% · about 1 min 10 s left" while a job runs. */
    progressText() {
      return progressText(this.job);
    },

    /** Show a job and poll it until it ends; then the models, jobs and corpus counts are read again. */
    follow(job) {
      clearTimeout(this.timer);
      this.job = job;
      if (!FINAL.has(job.status)) this.timer = setTimeout(() => this.poll(job.id), POLL_MS);
    },

    async poll(id) {
      const app = Alpine.store("app");
      const job = await app.run(() => call("GET", `/admin/jobs/${seg(id)}`));
      if (!job || !this.job || this.job.id !== id) return;
      this.job = job;
      if (!FINAL.has(job.status)) {
        this.timer = setTimeout(() => this.poll(id), POLL_MS);
        return;
      }
      await this.load();
      await app.loadCorpora();
      if (job.kind === "retrain" && job.gate && job.gate.activation === "queued") {
        // The gate passed and queued the activation: follow that job next.
        const next = this.jobs.find((j) => j.kind === "activate" && j.params.requested_by === job.id);
        if (next) this.follow(next);
      }
    },

    stage() {
      const p = (this.job && this.job.progress) || {};
      const parts = [p.stage];
      if (p.run && p.runs) parts.push(`fold run ${p.run}/${p.runs}`);
      if (p.epoch !== undefined) parts.push(`epoch ${p.epoch}`);
      if (p.step !== undefined && p.total_steps) parts.push(`step ${p.step}/${p.total_steps}`);
      if (p.dev_metric !== undefined && p.dev_metric !== null) parts.push(`dev ${p.metric || ""} ${Number(p.dev_metric).toFixed(4)}`);
      if (p.loss !== undefined) parts.push(`loss ${Number(p.loss).toFixed(4)}`);
      if (p.done !== undefined && p.total) parts.push(`${p.done}/${p.total}`);
      return parts.filter(Boolean).join(" · ");
    },

    /** The gate's report as rows: what it compared and what it decided. */
    gateRows() {
      const gate = this.job && this.job.gate;
      if (!gate) return [];
      const metric = gate.metric;
      const num = (v) => (typeof v === "number" ? v.toFixed(4) : v === undefined || v === null ? "" : String(v));
      const noise = gate.noise || {};
      return [
        ["protocol", gate.protocol],
        ["metric", metric],
        [`candidate ${metric}`, num(gate.candidate && gate.candidate[metric])],
        [`active ${metric}`, num(gate.active && gate.active[metric])],
        ["delta", num(gate.delta)],
        ["noise band (2 SE)", num(noise.noise_band)],
        ["fold spread", num(gate.spread)],
        ["scored as served", gate.ranking],
        ["candidate ranking", gate.candidate_ranking],
        ["active ranking", gate.active_ranking],
        ["improved", String(gate.improved)],
        ["activation", gate.activation],
      ].filter(([, value]) => value !== undefined && value !== null && value !== "");
    },

    hasCurve() {
      const c = this.job && this.job.progress && this.job.progress.curve;
      return Boolean(c && (c.steps.length || c.epochs.length));
    },

    drawCurve(canvas) {
      if (!this.hasCurve()) return;
      const c = this.job.progress.curve;
      const metric = (c.epochs.find((e) => e.metric) || {}).metric;
      draw(canvas, curve(c.steps, c.epochs, metric));
    },

    when(stamp) {
      return stamp ? new Date(stamp).toLocaleString() : "";
    },
  };
}
