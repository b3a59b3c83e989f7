// The Inbox tab: the queue of an inbox's clusters (largest or newest first), each with its representative
// text, size, a sparkline of arrivals, the decision and the suggested checks; keyboard triage (j/k move,
// 1-9 pick a candidate, c confirm, x reject, d dismiss); a cluster's items; the webhook deliveries.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, seg } from "./api.js";

const TYPING = new Set(["INPUT", "TEXTAREA", "SELECT"]);

/** An inbox path: /v1/inboxes/{name}{rest}. */
export function inboxPath(name, rest = "") {
  return `/v1/inboxes/${seg(name)}${rest}`;
}

/** SVG polyline points (100 x 20) of a cluster's arrivals per hour, from its first to its last hour. */
export function sparkline(arrivals) {
  if (!arrivals || !arrivals.length) return "";
  const hours = arrivals.map((a) => Date.parse(a.hour));
  const first = Math.min(...hours);
  const span = Math.round((Math.max(...hours) - first) / 3600000);
  const top = Math.max(...arrivals.map((a) => a.count));
  const counts = new Array(Math.min(span, 336) + 1).fill(0);
  arrivals.forEach((a, i) => {
    const slot = Math.min(counts.length - 1, Math.round((hours[i] - first) / 3600000));
    counts[slot] += a.count;
  });
  if (counts.length === 1) counts.push(counts[0]);
  const step = 100 / (counts.length - 1);
  return counts.map((c, i) => `${(i * step).toFixed(1)},${(20 - (c / top) * 18).toFixed(1)}`).join(" ");
}

export function inboxStore() {
  return {
    inboxes: [],
    inbox: "",
    sort: "size",
    status: "open",
    clusters: [],
    nextCursor: null,
    selected: 0,
    candidate: 0,
    deliveries: [],
    lastAction: "",

    get current() {
      return this.clusters[this.selected] || null;
    },
    get chosen() {
      const cluster = this.current;
      if (!cluster) return null;
      return cluster.candidates[this.candidate] || cluster.match || null;
    },
    sparkline,

    async load() {
      const app = Alpine.store("app");
      const listed = await app.run(() => call("GET", "/v1/inboxes"));
      if (!listed) return;
      this.inboxes = listed.inboxes;
      if (!this.inboxes.some((i) => i.name === this.inbox)) this.inbox = this.inboxes.length ? this.inboxes[0].name : "";
      await this.refresh();
    },

    async choose(name) {
      this.inbox = name;
      this.selected = 0;
      await this.refresh();
    },

    async refresh() {
      if (!this.inbox) return;
      const app = Alpine.store("app");
      const query = new URLSearchParams({ sort: this.sort, limit: "50", items: "20" });
      if (this.status) query.set("status", this.status);
      const page = await app.run(() => call("GET", inboxPath(this.inbox, `/clusters?${query}`)));
      if (!page) return;
      this.clusters = page.clusters;
      this.nextCursor = page.next_cursor;
      this.selected = Math.min(this.selected, Math.max(0, this.clusters.length - 1));
      this.candidate = 0;
      const sent = await app.run(() => call("GET", inboxPath(this.inbox, "/deliveries?limit=20")));
      if (sent) this.deliveries = sent.deliveries;
    },

    async more() {
      if (this.nextCursor === null) return;
      const app = Alpine.store("app");
      const query = new URLSearchParams({ sort: this.sort, limit: "50", items: "20", cursor: String(this.nextCursor) });
      if (this.status) query.set("status", this.status);
      const page = await app.run(() => call("GET", inboxPath(this.inbox, `/clusters?${query}`)));
      if (!page) return;
      this.clusters = this.clusters.concat(page.clusters);
      this.nextCursor = page.next_cursor;
    },

    select(index) {
      this.selected = Math.min(this.clusters.length - 1, Math.max(0, index));
      this.candidate = 0;
      Alpine.nextTick(() => document.querySelector(".cluster.selected")?.scrollIntoView({ block: "nearest" }));
    },

    /** Confirm the chosen candidate answers the selected cluster (positive pairs, by this key). */
    async confirm() {
      const cluster = this.current;
      const chosen = this.chosen;
      if (!cluster || !chosen) return;
      const body = { corpus: chosen.corpus, document_id: chosen.id };
      const done = await Alpine.store("app").run(() => call("POST", inboxPath(this.inbox, `/clusters/${cluster.id}/confirm`), body));
      if (done) this.lastAction = `cluster ${cluster.id}: confirmed ${chosen.id} (${done.pairs} pairs)`;
      await this.refresh();
    },

    /** Reject the chosen candidate for the selected cluster (negative pairs). */
    async reject() {
      const cluster = this.current;
      const chosen = this.chosen;
      if (!cluster || !chosen) return;
      const body = { corpus: chosen.corpus, document_id: chosen.id };
      const done = await Alpine.store("app").run(() => call("POST", inboxPath(this.inbox, `/clusters/${cluster.id}/reject`), body));
      if (done) this.lastAction = `cluster ${cluster.id}: rejected ${chosen.id}`;
      await this.refresh();
    },

    async setStatus(status) {
      const cluster = this.current;
      if (!cluster) return;
      const done = await Alpine.store("app").run(() => call("PUT", inboxPath(this.inbox, `/clusters/${cluster.id}/status`), { status }));
      if (done) this.lastAction = `cluster ${cluster.id}: ${status}`;
      await this.refresh();
    },

    onKey(event) {
      const app = Alpine.store("app");
      if (app.view !== "inbox" || !app.me || event.ctrlKey || event.metaKey || event.altKey) return;
      if (TYPING.has(event.target.tagName) || !this.clusters.length) return;
      const key = event.key;
      if (key === "j" || key === "n") this.select(this.selected + 1);
      else if (key === "k") this.select(this.selected - 1);
      else if (/^[1-9]$/.test(key)) this.candidate = Math.min(Number(key) - 1, Math.max(0, (this.current?.candidates.length || 1) - 1));
      else if (key === "c" && app.canWrite) this.confirm();
      else if (key === "x" && app.canWrite) this.reject();
      else if (key === "d" && app.canWrite) this.setStatus("dismissed");
    },
  };
}
