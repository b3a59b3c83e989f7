"""The use-case plane: what the API (and the CLIs) ask of the service, without HTTP.

Each use case takes a `ServiceContext` (settings, sessions, serving; app/serving/context.py) and typed
commands, never a web request or a request model: corpora and documents (`corpora`), ranking and
duplicates (`ranking`), side-by-side comparisons (`compare`), the re-ranking stage (`reranking`),
threshold and ranking calibration (`threshold_calibration`, `ranking_calibration`), match decisions and
their calibration (`matching`, `match_calibration`), evaluations (`evaluations`, `evaluation_report`),
imports, training pairs, retraining submissions, the model list (`model_admin`), API keys and
operations. The evaluation, import and match-calibration jobs' handlers live here too. May import every
plane below (`app.core`, `app.db`, `app.stores`, `app.serving`, `app.search`, `app.control`) and
`app.schemas`; never FastAPI or `app.api`.
"""
