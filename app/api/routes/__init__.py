"""One router per resource: corpora, ranking, evaluations, pairs, imports, admin, health."""
