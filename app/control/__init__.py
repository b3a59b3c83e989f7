"""The control plane: jobs and the model lifecycle, run by a job worker beside serving.

`worker` (claims jobs, keeps their leases, runs the handlers the composition root hands it),
`job_context`, `job_kinds`, `job_queue` (jobs as the admin API sees them), `recovery`, `activation`
(switch the serving model), `retraining` (the retraining job: its config, training child process and
curve), `gate` and `gate_cv` (is the candidate better?) and `pair_export` (labelled pairs as the
trainer reads them). May import: `app.core`, `app.db`, `app.stores`, `app.serving`, `app.search`,
`app.config`, `evaluation`, `pairank`; never the use cases or the API (job handlers that are use cases
live there, and app/process.py maps each job kind to its handler).
"""
