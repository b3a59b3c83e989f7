"""pairank: shared leaves (model resolution, command line) used by the service, training and evaluation."""

__version__ = "0.1.0"
