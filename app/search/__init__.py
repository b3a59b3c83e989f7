"""The search plane: reading a corpus with the serving model, beyond one plain vector search.

`ranking_setting` (which ranking a corpus uses, and the one way a choice of it is made and stored),
`hybrid` (BM25 and dense candidates fused), `filtered` (exact top k among the documents a metadata
filter admits) and `candidates` (judged queries ranked on the live store, for calibration and
evaluation). May import: `app.core`, `app.db`, `app.stores`, `app.serving`, `app.config`, `indexes`,
`evaluation`; never control, use cases or the API.
"""
