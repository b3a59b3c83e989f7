"""The retraining job: `job` (train, gate, register, queue the activation), `config` (its inputs and
the `pairank train` config it writes), `process` (the training child process), `curve` (its loss and
dev-metric curve, kept on the job's progress)."""
