"""The use-case plane: what the API (and the CLIs) ask of the service, without HTTP.

Each use case takes a `ServiceContext` (settings, sessions, serving; app/serving/context.py), never a
web request: corpora and documents, ranking, threshold and ranking calibration, evaluations, imports,
training pairs, retraining submissions, the model list, API keys and operations. The evaluation and
import jobs' handlers live here too. May import every plane below (`app.core`, `app.db`, `app.stores`,
`app.serving`, `app.search`, `app.control`) and `app.schemas`; never FastAPI or `app.api`.
"""
