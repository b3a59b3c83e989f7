#!/usr/bin/env bash
# Container start-up: wait for the database, migrate it, then serve the API with uvicorn.
#
# scripts/startup_check.sh runs this same file outside Docker against a real PostgreSQL, so it must not
# depend on container-only paths: it finds its helper next to itself and uses whatever `python`,
# `pairank` and `uvicorn` are first on PATH (/opt/venv/bin in the image, .venv/bin in the check).
#
# Deployment variables (read here, not app settings; the app reads its own PAIRANK_* settings):
#   PAIRANK_HOST             address uvicorn binds (default 0.0.0.0)
#   PAIRANK_PORT             port uvicorn binds (default 8000; the image's HEALTHCHECK reads it too)
#   PAIRANK_WORKERS          uvicorn worker processes (default 1; each loads its own model copy)
#   PAIRANK_DB_WAIT_TIMEOUT  seconds to wait for the database before giving up (default 60)
#
# With arguments it runs them instead, without waiting or migrating, so one-off commands work in the
# image: `docker compose run --rm api pairank eval-run ...`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ "$#" -gt 0 ]; then
    exec "$@"
fi

host="${PAIRANK_HOST:-0.0.0.0}"
port="${PAIRANK_PORT:-8000}"
workers="${PAIRANK_WORKERS:-1}"

# Fail before touching the database: a typo here should not cost a migration and a model load first.
case "$workers" in
    '' | *[!0-9]* | 0*)
        echo "entrypoint: PAIRANK_WORKERS must be a positive integer, got '$workers'" >&2
        exit 64
        ;;
esac
case "$port" in
    '' | *[!0-9]*)
        echo "entrypoint: PAIRANK_PORT must be a port number, got '$port'" >&2
        exit 64
        ;;
esac
if [ "$workers" -gt 1 ]; then
    # Each worker keeps its own model copy and in-memory indexes; writes made through one worker reach
    # the others at their next sync (PAIRANK_SYNC_SECONDS), so reads may lag writes by that much.
    echo "entrypoint: PAIRANK_WORKERS=${workers}: each worker loads its own model copy; documents written" \
        "through one worker are visible through the others within PAIRANK_SYNC_SECONDS" \
        "(${PAIRANK_SYNC_SECONDS:-1} s)" >&2
fi

# compose already waits for the postgres healthcheck, but `docker run`, orchestrators and a database
# restarting under us do not, so the container waits on its own as well.
echo "entrypoint: waiting for the database" >&2
python "$here/wait_for_db.py"

# `pairank migrate` is `alembic upgrade head` (the same migrations alembic.ini points at) followed by
# the start-up recovery that must run once before any worker serves: it marks work a stopped container
# left running as failed. Running it here, in one process, keeps N workers from racing to migrate.
echo "entrypoint: applying migrations" >&2
pairank migrate

# prometheus-client multiprocess mode: the workers write their metrics here and GET /metrics sums them.
# Container-local and emptied at every start, so a restart does not add the last run's counts.
export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-/tmp/pairank-metrics}"
rm -rf "$PROMETHEUS_MULTIPROC_DIR"
mkdir -p "$PROMETHEUS_MULTIPROC_DIR"

echo "entrypoint: serving app.main:app on ${host}:${port} with ${workers} worker(s)" >&2
# exec: uvicorn becomes PID 1, so `docker stop` (SIGTERM) reaches it and it shuts down gracefully.
exec uvicorn app.main:app --host "$host" --port "$port" --workers "$workers"
