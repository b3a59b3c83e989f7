// The console's entry point: one Alpine store per part of the workbench, then Alpine starts.
import Alpine from "../vendor/alpinejs/alpine.esm.min.js";
import { appStore } from "./app.js";
import { compareStore } from "./compare.js";
import { dataStore } from "./data.js";
import { duplicatesStore } from "./duplicates.js";
import { evaluationsStore } from "./evaluations.js";
import { inboxStore } from "./inbox.js";
import { matchStore } from "./match.js";
import { judgementsStore } from "./judgements.js";
import { modelsStore } from "./models.js";
import { querySetsStore } from "./querysets.js";
import { searchStore } from "./search.js";

Alpine.store("search", searchStore());
Alpine.store("compare", compareStore());
Alpine.store("duplicates", duplicatesStore());
Alpine.store("models", modelsStore());
Alpine.store("evaluations", evaluationsStore());
Alpine.store("match", matchStore());
Alpine.store("judgements", judgementsStore());
Alpine.store("data", dataStore());
Alpine.store("querysets", querySetsStore());
Alpine.store("inbox", inboxStore());
Alpine.store("app", appStore()); // last: its init() signs a kept key in, which uses the others
window.Alpine = Alpine; // for the browser's devtools
Alpine.start();
