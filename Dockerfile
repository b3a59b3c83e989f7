# syntax=docker/dockerfile:1
# pairank API image: docs/guides/deployment.md. Build, CPU (default):  docker build -t pairank .
#                                        Build, CUDA:           docker build --build-arg TORCH_VARIANT=cuda -t pairank:gpu .
# TORCH_VARIANT: `cpu` (the small CPU wheel from download.pytorch.org/whl/cpu), `cuda` (the plain PyPI
# wheel, which on Linux x86_64 is the CUDA build and brings its CUDA runtime as nvidia-* wheels, so the
# slim base needs no CUDA image; the host needs only the NVIDIA driver and container toolkit), or a
# download.pytorch.org CUDA index tag such as `cu126` / `cu128`.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# ---------------------------------------------------------------------------------------------------
# builder: a virtual environment at /opt/venv holding the dependencies and pairank itself.
FROM ${PYTHON_IMAGE} AS builder

ARG TORCH_VERSION=2.13.0
ARG TORCH_VARIANT=cpu

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH

RUN python -m venv /opt/venv

WORKDIR /src

# Torch first and on its own: it is the biggest layer and depends only on the build arguments, so a
# change to pyproject.toml does not download it again.
RUN case "$TORCH_VARIANT" in \
        cuda) pip install --no-cache-dir "torch==${TORCH_VERSION}" ;; \
        *) pip install --no-cache-dir "torch==${TORCH_VERSION}" \
               --index-url "https://download.pytorch.org/whl/${TORCH_VARIANT}" ;; \
    esac

# The remaining dependencies, from pyproject.toml alone (the code is not copied yet, so editing it keeps
# this layer cached). The constraint makes pip fail rather than quietly swap the torch chosen above for
# a different build if pyproject's torch range ever stops admitting TORCH_VERSION.
COPY pyproject.toml docker/requirements_from_pyproject.py ./
RUN python requirements_from_pyproject.py pyproject.toml > /tmp/requirements.txt \
    && echo "torch==${TORCH_VERSION}" > /tmp/constraints.txt \
    && pip install --no-cache-dir -r /tmp/requirements.txt -c /tmp/constraints.txt

# CUDA builds: Faiss with GPU kernels (the `gpu` extra; benchmarks/gpu.md says why faiss-cuda and not
# faiss-gpu-cu12) in place of faiss-cpu; both install the `faiss` module, so the CPU one leaves first.
RUN if [ "$TORCH_VARIANT" != "cpu" ]; then \
        pip uninstall -y faiss-cpu && pip install --no-cache-dir "faiss-cuda==1.14.3.post0"; \
    fi

# pairank itself (a regular, non-editable install; --no-deps: everything it needs is already there).
# One COPY per package of [tool.setuptools.packages.find]; tests/deploy checks the two lists agree.
COPY README.md ./
COPY app ./app
COPY pairank ./pairank
COPY indexes ./indexes
COPY encoders ./encoders
COPY training ./training
COPY evaluation ./evaluation
COPY migrations ./migrations
RUN pip install --no-cache-dir --no-deps .

# ---------------------------------------------------------------------------------------------------
# runtime: the same base (so /opt/venv's interpreter path is valid), the venv, and nothing to build with.
FROM ${PYTHON_IMAGE} AS runtime

ARG TORCH_VARIANT=cpu
LABEL org.opencontainers.image.title="pairank" \
      org.opencontainers.image.description="Semantic ranking service (FastAPI, sentence-transformers, Faiss)" \
      io.pairank.torch-variant="${TORCH_VARIANT}"

# HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE: the default model is baked in; a hub name must fail fast
# instead of hanging on a network the container may not have. PAIRANK_DATA_DIR is the /data volume.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    PAIRANK_DATA_DIR=/data \
    PAIRANK_HOST=0.0.0.0 \
    PAIRANK_PORT=8000 \
    PAIRANK_WORKERS=1

# A fixed, unprivileged uid/gid, so bind-mounted data dirs can be chowned to it (10001:10001).
# /data is created and owned here, before VOLUME: a new named volume starts as a copy of it, and so is
# writable by this user without any chown at start-up.
RUN groupadd --system --gid 10001 pairank \
    && useradd --system --uid 10001 --gid pairank --create-home --home-dir /home/pairank \
        --shell /usr/sbin/nologin pairank \
    && mkdir -p /data \
    && chown pairank:pairank /data

COPY --from=builder /opt/venv /opt/venv

# The code stays root-owned (read-only for the service); alembic.ini and migrations/ are here so that
# `docker compose exec api alembic current` works from the working directory.
WORKDIR /app
COPY alembic.ini ./
COPY migrations ./migrations
COPY --chmod=0755 docker/entrypoint.sh docker/wait_for_db.py ./docker/

# Verify the baked-in default model at build time: resolve_model('default') checks the weights'
# sha256 against the pinned one, then one encode proves it loads offline (HF_HUB_OFFLINE is set above).
RUN python -c "from pairank.models import resolve_model; resolve_model('default')" \
    && python -c "from pairank.models import load_sentence_transformer, resolve_model; \
load_sentence_transformer(resolve_model('default'), device='cpu').encode(['build check'])"

# Numeric, so runtimes can check it is not root (Kubernetes runAsNonRoot) without reading /etc/passwd.
USER 10001:10001
EXPOSE 8000
VOLUME ["/data"]

# Liveness only: /health answers as soon as uvicorn listens, also while the model loads (readiness is
# GET /ready). The slim image has no curl, so Python asks. start-period covers migrations and imports.
# Any failure (refused, timeout, non-2xx) raises, and Python then exits 1, which Docker reads as unhealthy.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PAIRANK_PORT', '8000') + '/health', timeout=4)"]

ENTRYPOINT ["/app/docker/entrypoint.sh"]
