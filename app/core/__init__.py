"""The core plane: domain errors, request limits, per-kind defaults, the match policy and the text hash.

The ground every other plane stands on. It imports nothing of `app` but the settings (`app.config`),
and no database, store or web framework.
"""
