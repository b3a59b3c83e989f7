"""Request and response models (pydantic): the API's contract, also read by the use cases they carry.

May import: `app.core`, `evaluation` and `indexes` (metric names, ranking defaults); never the
database, the planes above it, or FastAPI.
"""
