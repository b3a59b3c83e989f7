"""Fine-tuning bi-encoders with the BSC loss family: configs, trainer, `pairank train` (its README.md)."""
