"""pairank's service, one package per plane, each importing only the planes below it (docs: layout).

Bottom up: `core` (with `config` and `observability`), `db` and `schemas`, `stores`, `serving`,
`search`, `control`, `usecases`, `api`; `main` is the composition root, and `cli`, `worker_cli`,
`keys_cli` and `import_cli` are the commands. tests/test_import_graph.py holds the rule.
"""
