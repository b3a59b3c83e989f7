"""The search plane: reading a corpus with the serving model, beyond one plain vector search.

`first_stage` (the live corpus as the one first stage reads it: indexes/first_stage.py gathers and
ranks), `filtered` (exact top k among the documents a metadata filter admits), `candidates` (judged
queries ranked on the live store, for calibration, evaluation and the gate), `ranking_setting` (which
ranking a corpus uses, and the one way a choice of it is made and stored), `ranked` (the records a
search answers with) and `decisions` (a calibrated corpus's match decisions on a served list). May
import: `app.core`, `app.db`, `app.stores`, `app.serving`, `app.config`, `indexes`, `evaluation`; never
control, use cases or the API.
"""
