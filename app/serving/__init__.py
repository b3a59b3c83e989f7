"""The serving plane: one process's model, its vector store, and the threads that keep them current.

`state` (what requests read, and the only place that swaps it), `encoder` (the micro-batched model),
`registry` (which model is active), `follower` (other processes' writes and activations), `demo` (the
demo corpus seeded at start-up), `runtime` (wires them to one engine and runs their threads) and
`context` (the narrow view of a process that use cases and job handlers are given). May import:
`app.core`, `app.db`, `app.stores`, `app.observability`, `app.config`, `encoders`, `indexes`,
`pairank`; never search, control, use cases or the API.
"""
