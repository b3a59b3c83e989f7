"""pairank: shared leaves (model resolution, command line) used by the service, training and evaluation;
and the Python client (`pairank.client`), which reads only the API's models (`app.schemas`)."""

__version__ = "0.1.0"
