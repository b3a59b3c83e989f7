"""The API plane: FastAPI routes (thin: parse, call a use case, shape the answer), security, errors and
the OpenAPI contract. May import every plane below; only `app.main` imports it.
"""
