"""Model artifacts: the port (`port`), its two adapters (`database`: files as blobs in the database,
the default on PostgreSQL; `local`: files left in the folder a model was registered from, SQLite's one
machine), the verified local copy they share (`files`), and `factory`, the one module that knows both."""
