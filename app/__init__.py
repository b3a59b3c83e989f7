"""pairank's service, one package per plane, each importing only the planes below it (docs: layout).

Bottom up: `core` (with `config` and `observability`), `db` and `schemas`, `stores`, `serving`,
`search`, `control`, `usecases`, `api`; `process` is the composition root of every process (job
handlers, process set-up), `main` the web application built on it, and `cli`, `worker_cli`,
`keys_cli`, `import_cli` and `models_cli` are the commands. tests/test_import_graph.py holds the rule.
"""
