"""What operators watch: Prometheus metrics, request ids and structured logs.

Ground level beside `app.core`: it imports nothing of `app`, and every plane may use it.
"""
