"""The database plane: the engine, the ORM models, and the repositories, the only code that runs SQL.

Also the corpus lookup that raises the one 404 (`corpus_lookup`) and the wait for other processes'
writes (`change_waiter`: PostgreSQL LISTEN). Alembic's migrations import the models from here. May
import: `app.core`, `app.config`; never stores, serving, search, control, use cases or the API.
"""
