// The console's shared state: who is signed in (GET /v1/whoami), the corpora the key may touch, the
// chosen corpus and its judgement counts, the view shown, and the one visible error message.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { call, corpusPath, session } from "./api.js";
import { rerankChoices } from "./ranking.js";

export function appStore() {
  return {
    keyInput: "",
    me: null,
    corpora: [],
    corpus: "",
    counts: null,
    view: "search",
    error: "",
    busy: 0,

    get canWrite() {
      return this.me !== null && this.me.scope !== "read";
    },
    get isAdmin() {
      return this.me !== null && this.me.scope === "admin";
    },
    /** Who is signed in, in words: the key's name or id, the environment's admin key, or nobody. */
    get whoLabel() {
      const me = this.me;
      if (me === null) return "";
      if (me.key_id) return me.name ? `${me.name} (${me.key_id})` : `key ${me.key_id}`;
      return me.scope === "admin" ? "the environment's admin key" : "no key (auth disabled)";
    },
    /** The chosen corpus as GET /v1/corpora lists it (its ranking and re-ranking stage), or null. */
    get current() {
      return this.corpora.find((c) => c.name === this.corpus) || null;
    },
    /** The Re-rank select's options for the chosen corpus and this key (empty: the select is hidden). */
    get rerankChoices() {
      return rerankChoices(this.current, Alpine.store("models").list, this.isAdmin);
    },

    /** Alpine calls it once: a key kept in this tab's session signs in again after a reload. */
    async init() {
      const kept = session.key();
      if (kept !== null) await this.signIn(kept);
    },

    /** Run an API action: the error cleared first, shown on failure (inputs keep what was typed). */
    async run(action) {
      this.error = "";
      this.busy += 1;
      try {
        return await action();
      } catch (error) {
        this.error = error && error.message ? error.message : String(error);
        return undefined;
      } finally {
        this.busy -= 1;
      }
    },

    async signIn(key = this.keyInput.trim()) {
      const me = await this.run(() => call("GET", "/v1/whoami", undefined, key));
      if (!me) return;
      session.save(key);
      this.me = me;
      this.keyInput = "";
      await this.loadCorpora();
      Alpine.store("models").reset();
      if (this.isAdmin) await Alpine.store("models").load();
    },

    signOut() {
      session.save(null);
      this.me = null;
      this.corpora = [];
      this.corpus = "";
      this.counts = null;
      this.error = "";
      Alpine.store("search").reset();
      Alpine.store("compare").reset();
      Alpine.store("models").reset();
    },

    async loadCorpora() {
      const listed = await this.run(() => call("GET", "/v1/corpora"));
      if (!listed) return;
      this.corpora = listed.corpora || listed;
      if (!this.corpora.some((c) => c.name === this.corpus)) {
        this.corpus = this.corpora.length ? this.corpora[0].name : "";
      }
      await this.loadCounts();
    },

    /** Judged queries and pairs of the chosen corpus. */
    async loadCounts() {
      if (!this.corpus) return;
      const page = await this.run(() => call("GET", corpusPath(this.corpus, "/pairs?limit=1")));
      if (page) this.counts = page.counts;
    },

    async chooseCorpus(name) {
      this.corpus = name;
      this.counts = null;
      Alpine.store("search").reset();
      Alpine.store("compare").reset();
      Alpine.store("match").reset();
      await this.loadCounts();
      if (this.view === "match") await Alpine.store("match").load();
    },

    show(view) {
      this.view = view;
      if (view === "models" && this.isAdmin) Alpine.store("models").load();
      if (view === "evaluations") Alpine.store("evaluations").load();
      if (view === "match") Alpine.store("match").load();
    },
  };
}
