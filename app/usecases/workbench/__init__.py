"""The judging workbench's use cases: one judgement per (pair, judge) and their aggregate (`judging`),
listing, editing and agreement (`judgements`), export and import (`exchange`), query sets (`query_sets`)."""
