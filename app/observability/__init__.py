"""What operators watch: Prometheus metrics, request ids and structured logs."""
