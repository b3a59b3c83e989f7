"""The stores plane: the vector-store port, its two adapters, and the factory that picks one.

`port` is the contract (what search, serving and the use cases may call), `opened` what both adapters
share, `faiss_store` and `pgvector_store` (with `pgvector_corpus`, `pgvector_maintenance`) the
adapters, `lexical_store` the BM25 index beside either, and `factory` the only module that knows the
adapters. May import: `app.core`, `app.db`, `app.config`, `indexes`; never serving, search, control,
use cases or the API.
"""
