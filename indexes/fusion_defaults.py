"""The default lexical weight of hybrid ranking, without numpy (the API's request models read it, and the
Python client imports those models; `indexes.fusion` fuses with it)."""

from __future__ import annotations

# The lexical weight of a `hybrid` ranking that names none (a request, an evaluation, a kind's default):
# between the best mixes measured on claims (PFCC-S, 0.1) and questions (CQA-B, 0.3) in benchmarks/hybrid.md.
DEFAULT_ALPHA = 0.2
