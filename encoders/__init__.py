"""Encoder runtimes shared by the service and evaluation: torch, ONNX Runtime and OpenVINO backends,
their cached and quality-gated exports, and the micro-batcher that gathers concurrent calls.
"""
