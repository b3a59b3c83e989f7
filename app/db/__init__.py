"""The database plane: the engine, the ORM models, and the repositories, the only code that runs SQL.

`engine` (engines, sessions, transactions), `models` and `admin_models` (the ORM tables; Alembic's
migrations import them), `repositories/` (one small repository per table group), `corpus_lookup` (the
corpus and documents that must exist: the one 404), `corpus_settings` (a corpus's serving settings as
requests read them, and their changes), `notifications` (NOTIFY/LISTEN between processes),
`metadata_filter` (metadata filters as SQL), `blob_store` (job inputs in the database), `vector_schema`
(pgvector's columns), `migrate` and `artifacts/` (models' manifests). May import: `app.core`,
`app.config`; never stores, serving, search, control, use cases or the API.
"""
