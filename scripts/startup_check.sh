#!/usr/bin/env bash
# Start-up check: the container's start-up sequence, run OUTSIDE Docker against this machine's real
# PostgreSQL and with the real bundled default model, as the image runs it:
#   1. a fresh, empty database;
#   2. docker/entrypoint.sh itself (wait for the database, `pairank migrate`, uvicorn app.main:app)
#      with the image's environment (HF_HUB_OFFLINE=1, a data dir, one worker) on a free port;
#   3. /health, then /ready; the schema is at alembic head; the Dockerfile's own HEALTHCHECK command
#      passes; create a corpus, upsert documents, rank a paraphrase, check the expected one comes first;
#   4. SIGTERM (what `docker stop` sends) must stop it cleanly; then a second start on the same
#      database and data dir (what every container restart does) must migrate as a no-op, reload the
#      index bundle and rank the same way;
#   5. clean-up: server stopped, database dropped, temporary data dir removed (also on failure).
# Exits non-zero with a "startup_check: FAILED: ..." line (and the server log's tail) on any failure.
#
# Usage, from anywhere (CI runs it from .ci/run):  bash scripts/startup_check.sh
# Optional environment:
#   STARTUP_CHECK_ADMIN_URL  database to create the check's database from
#                            (default postgresql+psycopg://postgres@127.0.0.1:5432/postgres)
#   STARTUP_CHECK_TIMEOUT    seconds to wait for /ready on each start (default 300: a busy CI machine)
#   VENV                     virtual environment put first on PATH (default .venv, as `make install`)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
venv="${VENV:-.venv}"
admin_url="${STARTUP_CHECK_ADMIN_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/postgres}"
ready_timeout="${STARTUP_CHECK_TIMEOUT:-300}"
# One database per run, so a check in CI and one by a developer on the same server never collide.
database="pairank_startup_check_$$"

step() { echo "startup_check: $*"; }
fail() {
    echo "startup_check: FAILED: $*" >&2
    exit 1
}

[ -x "$venv/bin/python" ] || fail "no virtual environment at $venv (run: make install)"
# The venv first on PATH, as /opt/venv/bin is in the image: the entrypoint runs python, pairank, uvicorn.
export PATH="$root/$venv/bin:$PATH"
helpers=(python "$root/scripts/startup_check_helpers.py")

# Start from the container's environment, not the caller's: drop any PAIRANK_* already set here.
while IFS= read -r name; do
    unset "$name"
done < <(compgen -e | grep '^PAIRANK_' || true)

workdir="$(mktemp -d "${TMPDIR:-/tmp}/pairank-startup-check.XXXXXX")"
server_pid=""
server_log=""
database_created=""

cleanup() {
    local status=$?
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -KILL "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [ "$status" -ne 0 ] && [ -n "$server_log" ] && [ -f "$server_log" ]; then
        echo "---- last 80 lines of $(basename "$server_log") ----" >&2
        tail -n 80 "$server_log" >&2
        echo "---- end of server log ----" >&2
    fi
    if [ -n "$database_created" ]; then
        "${helpers[@]}" drop-db "$admin_url" "$database" >/dev/null ||
            echo "startup_check: could not drop database $database; drop it by hand" >&2
    fi
    rm -rf "$workdir"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Start docker/entrypoint.sh in the background on a free port and wait until it is ready.
start_server() {
    local name="$1"
    server_log="$workdir/server-${name// /-}.log"
    PAIRANK_PORT="$("${helpers[@]}" free-port)"
    export PAIRANK_PORT
    base_url="http://127.0.0.1:$PAIRANK_PORT"
    step "$name: starting docker/entrypoint.sh on $base_url (log: $server_log)"
    bash "$root/docker/entrypoint.sh" >"$server_log" 2>&1 &
    # The entrypoint execs uvicorn, so this pid is the server itself, as PID 1 is in the container.
    server_pid=$!
    "${helpers[@]}" wait-ready "$base_url" "$server_pid" "$ready_timeout" ||
        fail "$name: the server did not become ready"
}

# SIGTERM, as `docker stop` sends; the server must exit 0 within compose's stop_grace_period (30s).
stop_server() {
    local name="$1" pid="$server_pid" status=0
    kill -TERM "$pid"
    for _ in $(seq 1 60); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null && fail "$name: the server was still running 30s after SIGTERM"
    wait "$pid" || status=$?
    server_pid=""
    # uvicorn shuts down gracefully, then re-raises the signal, so 143 (128 + SIGTERM) is a clean exit
    # too (Docker reports the same code); the log line proves the lifespan shutdown ran.
    case "$status" in
        0 | 143) ;;
        *) fail "$name: the server exited with status $status after SIGTERM" ;;
    esac
    grep -q "Application shutdown complete" "$server_log" ||
        fail "$name: the server exited without completing its shutdown"
    step "$name: stopped cleanly on SIGTERM (exit status $status)"
}

step "creating empty database $database"
"${helpers[@]}" create-db "$admin_url" "$database" ||
    fail "cannot create a database through $admin_url: is PostgreSQL running? (.ci/run starts it;" \
        "by hand: pg_ctlcluster --skip-systemctl-redirect <version> main start)"
database_created=1

# The container's environment (Dockerfile ENV plus docker-compose.yml), pointed at this machine.
PAIRANK_DATABASE_URL="$("${helpers[@]}" database-url "$admin_url" "$database")"
export PAIRANK_DATABASE_URL
export PAIRANK_DATA_DIR="$workdir/data"
export PAIRANK_HOST=127.0.0.1
export PAIRANK_WORKERS=1
export PAIRANK_DB_WAIT_TIMEOUT=30
export PAIRANK_MODEL=default
# Keys are required (the image's default): the first start stores this admin key, the checks send it.
PAIRANK_BOOTSTRAP_ADMIN_KEY="$(pairank keys generate)"
export PAIRANK_BOOTSTRAP_ADMIN_KEY
export HF_HUB_OFFLINE=1
export TRANSFORMERS_OFFLINE=1
export PYTHONUNBUFFERED=1
mkdir -p "$PAIRANK_DATA_DIR"

start_server "first start"
"${helpers[@]}" check-migrated "$PAIRANK_DATABASE_URL" || fail "the entrypoint did not migrate the database"
"${helpers[@]}" healthcheck up || fail "the image's HEALTHCHECK does not pass against a running server"
"${helpers[@]}" smoke "$base_url" || fail "smoke requests against the first start"
stop_server "first start"
"${helpers[@]}" healthcheck down || fail "the image's HEALTHCHECK passes with the server stopped"

# The index bundle is what the data dir volume keeps across restarts.
find "$PAIRANK_DATA_DIR/indexes" -name manifest.json -print -quit 2>/dev/null | grep -q . ||
    fail "no index bundle under $PAIRANK_DATA_DIR/indexes after the first start"

start_server "restart"
"${helpers[@]}" check-migrated "$PAIRANK_DATABASE_URL" || fail "the database lost its migrations"
"${helpers[@]}" rank "$base_url" || fail "ranking after the restart"
stop_server "restart"

step "passed: wait for database, migrate, serve, rank, stop and restart all work against PostgreSQL"
