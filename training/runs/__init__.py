"""A training run's folder, its resumable state, its summary and its plots."""
