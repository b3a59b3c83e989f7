"""docker-compose.yml invariants, checked without a Docker engine (PyYAML, the app's Settings).

What an engine would only reveal at `docker compose up` (a misspelt setting silently ignored, a default
that drifted from the app's, a volume mounted where nothing reads it, an undocumented variable) fails
here instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import TypeAdapter
from sqlalchemy.engine import make_url

from app.config import Settings
from tests.deploy.deploy_helpers import (
    COMPOSE_FILE,
    ENTRYPOINT,
    ENTRYPOINT_VARIABLES,
    ENV_EXAMPLE,
    ROOT,
    WAIT_FOR_DB,
    parse_env_file,
    references,
    resolve,
    strings,
)

API_SERVICES = ("api", "api-gpu")
WORKER_SERVICES = ("worker", "worker-gpu")
SETTINGS_VARIABLES = {f"PAIRANK_{name.upper()}": name for name in Settings.model_fields}
# compose's own variables, which .env may set for compose itself rather than for this file.
COMPOSE_BUILTINS = re.compile(r"^(COMPOSE_|DOCKER_)")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE_FILE.read_text())
    assert isinstance(loaded, dict), "docker-compose.yml is not a mapping"
    return loaded


@pytest.fixture(scope="module")
def resolved(compose: dict[str, Any]) -> dict[str, Any]:
    """The compose file as `docker compose config` sees it with no .env: every default applied."""
    return resolve(compose, {})


def _environment(service: dict[str, Any]) -> dict[str, str | None]:
    environment = service.get("environment") or {}
    # The list form (`- NAME=value`) is legal compose; normalise it so the checks read one shape.
    if isinstance(environment, list):
        pairs = (item.split("=", 1) if "=" in item else (item, None) for item in environment)
        environment = dict(pairs)
    return {str(key): (None if value is None else str(value)) for key, value in environment.items()}


def _mounts(service: dict[str, Any]) -> dict[str, str]:
    """target -> source for a service's volumes (short `source:target[:mode]` or long syntax)."""
    mounts = {}
    for volume in service.get("volumes") or []:
        if isinstance(volume, dict):
            mounts[volume["target"]] = volume.get("source", "")
        else:
            source, target, *_ = f"{volume}:".split(":")
            mounts[target] = source
    return mounts


def _pass_through(compose: dict[str, Any]) -> set[str]:
    """Environment entries without a value: compose takes them from .env or the shell, if set there."""
    names = set()
    for service in compose["services"].values():
        names |= {name for name, value in _environment(service).items() if value is None}
    return names


def _interpolated(compose: dict[str, Any]) -> dict[str, set[str | None]]:
    """Every variable the file interpolates -> the defaults it is given (None: no default)."""
    found: dict[str, set[str | None]] = {}
    for value in strings(compose):
        for reference in references(value):
            found.setdefault(reference.name, set()).add(reference.default)
    return found


def test_services(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"postgres", "proxy", *API_SERVICES, *WORKER_SERVICES}
    # PostgreSQL 16 with pgvector, where the API keeps its vectors.
    assert str(services["postgres"]["image"]) == "pgvector/pgvector:pg16"
    assert _environment(compose["x-api"])["PAIRANK_VECTOR_STORE"] == "pgvector"
    # `docker compose up` with no profile must start the CPU API and the database, nothing else.
    assert "profiles" not in services["api"]
    assert "profiles" not in services["postgres"]
    assert services["api-gpu"]["profiles"] == ["gpu"] == services["worker-gpu"]["profiles"]
    assert "profiles" not in services["worker"]
    for name in (*API_SERVICES, *WORKER_SERVICES):
        assert services[name]["build"]["context"] == "."


@pytest.mark.parametrize("service", WORKER_SERVICES)
def test_workers_run_the_jobs(compose: dict[str, Any], service: str) -> None:
    worker, api = compose["services"][service], compose["services"][service.replace("worker", "api")]
    assert worker["command"] == ["pairank", "worker"] and "ports" not in worker
    assert worker["healthcheck"] == {"disable": True}  # the image's probe asks the API port
    # Same image and settings as the API it works for, and the API leaves the jobs to it.
    assert worker["image"] == api["image"] and worker["build"] == api["build"]
    assert _environment(worker) == _environment(api)
    assert _environment(api)["PAIRANK_EMBEDDED_WORKER"] == "false"
    assert _mounts(worker) == {"/data": "worker-data"}
    assert worker["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_postgres_healthcheck(compose: dict[str, Any]) -> None:
    healthcheck = compose["services"]["postgres"]["healthcheck"]
    test = healthcheck["test"]
    command = " ".join(test) if isinstance(test, list) else str(test)
    assert "pg_isready" in command
    # Over TCP: the first-start init server listens on the Unix socket only, and is not the real one.
    assert "-h 127.0.0.1" in command
    assert command.startswith(("CMD-SHELL", "CMD"))
    for key in ("interval", "timeout", "retries"):
        assert key in healthcheck, f"postgres healthcheck has no {key}"
    assert int(healthcheck["retries"]) * int(str(healthcheck["interval"]).rstrip("s")) >= 30


@pytest.mark.parametrize("service", API_SERVICES)
def test_api_waits_for_a_healthy_database(compose: dict[str, Any], service: str) -> None:
    depends_on = compose["services"][service]["depends_on"]
    assert isinstance(depends_on, dict), "the short list form of depends_on only waits for 'started'"
    assert depends_on["postgres"]["condition"] == "service_healthy"


def test_named_volumes(compose: dict[str, Any], resolved: dict[str, Any]) -> None:
    assert set(compose["volumes"]) == {"postgres-data", "pairank-data", "worker-data"}
    assert _mounts(compose["services"]["postgres"]) == {"/var/lib/postgresql/data": "postgres-data"}
    for service in API_SERVICES:
        assert _mounts(compose["services"][service]) == {"/data": "pairank-data"}
    for service in (*API_SERVICES, *WORKER_SERVICES):
        # The volume is the app's cache (fetched models, exports, snapshots) only if the data dir is there.
        assert _environment(resolved["services"][service])["PAIRANK_DATA_DIR"] == "/data"


def _writable_sources(service: dict[str, Any]) -> set[str]:
    """Named volumes and host paths a service mounts read-write."""
    sources = set()
    for volume in service.get("volumes") or []:
        if isinstance(volume, dict):
            if not volume.get("read_only"):
                sources.add(str(volume.get("source", "")))
        else:
            source, _target, *mode = str(volume).split(":")
            if "ro" not in mode:
                sources.add(source)
    return sources


def test_api_and_worker_share_no_writable_volume(compose: dict[str, Any], resolved: dict[str, Any]) -> None:
    # Everything the api and the worker exchange (job inputs, trained models, keys, vectors) is in the
    # database: each keeps only its own cache, so they may run on machines that share no disk.
    services = compose["services"]
    apis = set().union(*(_writable_sources(services[name]) for name in API_SERVICES))
    workers = set().union(*(_writable_sources(services[name]) for name in WORKER_SERVICES))
    assert not apis & workers, f"api and worker share {apis & workers}"
    # (test_required_settings_are_set_and_valid: the compose settings resolve to the database store.)


@pytest.mark.parametrize("service", API_SERVICES)
def test_every_pairank_variable_is_a_setting_or_read_by_the_entrypoint(
    compose: dict[str, Any], service: str
) -> None:
    names = [name for name in _environment(compose["services"][service]) if name.startswith("PAIRANK_")]
    unknown = sorted(set(names) - set(SETTINGS_VARIABLES) - ENTRYPOINT_VARIABLES)
    assert not unknown, f"{service} sets {unknown}: not fields of app.config.Settings (misspelt? removed?)"


@pytest.mark.parametrize("service", API_SERVICES)
def test_every_setting_is_configurable(compose: dict[str, Any], service: str) -> None:
    environment = _environment(compose["services"][service])
    missing = sorted(set(SETTINGS_VARIABLES) - set(environment))
    assert not missing, (
        f"{service} does not pass {missing}: add each to the x-api environment in docker-compose.yml "
        "(as `NAME: ${NAME:-<app default>}`, or `NAME:` when its default is unset) and to .env.example"
    )


@pytest.mark.parametrize("service", API_SERVICES)
def test_required_settings_are_set_and_valid(
    resolved: dict[str, Any], service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = resolved["services"]
    environment = _environment(services[service])
    for name, field in Settings.model_fields.items():
        if field.is_required():
            assert environment.get(f"PAIRANK_{name.upper()}"), f"required setting {name} is not set"

    # The database is the compose service, reached with the credentials the postgres service creates.
    url = make_url(environment["PAIRANK_DATABASE_URL"] or "")
    postgres = _environment(services["postgres"])
    assert url.get_backend_name() == "postgresql"
    assert url.get_driver_name() == "psycopg"  # the driver pyproject installs (psycopg 3)
    assert url.host == "postgres"
    assert url.port in (None, 5432)
    assert url.username == postgres["POSTGRES_USER"]
    assert url.password == postgres["POSTGRES_PASSWORD"]
    assert url.database == postgres["POSTGRES_DB"]

    # With every default applied, the app accepts the configuration (types and bounds).
    for variable in list(os.environ):
        if variable.startswith("PAIRANK_"):
            monkeypatch.delenv(variable)
    for name, value in environment.items():
        if value is not None:
            monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.resolved_database_url == environment["PAIRANK_DATABASE_URL"]
    assert str(settings.data_dir) == "/data"
    assert settings.resolved_artifact_store == "database"  # models travel in PostgreSQL, not a volume


def test_defaults_agree_with_the_app(compose: dict[str, Any]) -> None:
    # compose repeats each default so that .env can override it; a copy that drifts from app/config.py
    # would silently change production behaviour, so each must parse to the app's own default.
    environment = _environment(compose["x-api"])
    checked = 0
    for variable, value in environment.items():
        field_name = SETTINGS_VARIABLES.get(variable)
        refs = references(value or "")
        if field_name is None or len(refs) != 1 or refs[0].name != variable or refs[0].default is None:
            continue
        field = Settings.model_fields[field_name]
        assert field.annotation is not None
        parsed = TypeAdapter(field.annotation).validate_python(refs[0].default)
        assert parsed == field.default, (
            f"{variable} defaults to {refs[0].default!r}, the app to {field.default!r}"
        )
        checked += 1
    assert checked >= 10


def test_unset_by_default_settings_are_passed_through_not_emptied(compose: dict[str, Any]) -> None:
    # An empty value is not "unset" to pydantic-settings (PAIRANK_MAX_SEQ_LENGTH="" fails to start), so
    # a setting whose default is None must be a bare entry, never `${NAME:-}`.
    environment = _environment(compose["x-api"])
    for variable, field_name in SETTINGS_VARIABLES.items():
        if Settings.model_fields[field_name].default is None and variable != "PAIRANK_DATABASE_URL":
            assert environment.get(variable) is None, f"{variable} should be a bare `{variable}:` entry"


def test_env_example_documents_every_variable(compose: dict[str, Any]) -> None:
    active, commented = parse_env_file(ENV_EXAMPLE)
    documented = set(active) | commented
    used = set(_interpolated(compose)) | _pass_through(compose)
    undocumented = sorted(used - documented)
    assert not undocumented, f"docker-compose.yml uses {undocumented}; document them in .env.example"
    stale = sorted(name for name in documented - used if not COMPOSE_BUILTINS.match(name))
    assert not stale, f".env.example documents {stale}, which docker-compose.yml does not use"


def test_env_example_values_are_the_compose_defaults(compose: dict[str, Any]) -> None:
    # A copied, untouched .env.example must change nothing.
    active, commented = parse_env_file(ENV_EXAMPLE)
    for name, defaults in _interpolated(compose).items():
        if name in active:
            assert defaults == {active[name]}, (
                f"{name}: .env.example says {active[name]!r}, compose {defaults}"
            )
    # Pass-through settings are unset by default, so .env.example shows them commented out.
    for name in _pass_through(compose):
        assert name in commented and name not in active, f"{name} should be a commented-out `# {name}=`"


def test_entrypoint_variables_are_read_by_the_entrypoint() -> None:
    sources = ENTRYPOINT.read_text() + WAIT_FOR_DB.read_text()
    for variable in ENTRYPOINT_VARIABLES:
        assert variable in sources, f"{variable} is allowed as an entrypoint variable but nothing reads it"
    clash = sorted(ENTRYPOINT_VARIABLES & set(SETTINGS_VARIABLES))
    assert not clash, f"{clash} became app settings: the entrypoint's meaning for them must be reconciled"


def test_gpu_profile(compose: dict[str, Any], resolved: dict[str, Any]) -> None:
    services = resolved["services"]
    gpu, cpu = services["api-gpu"], services["api"]
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert any(d.get("driver") == "nvidia" and "gpu" in d.get("capabilities", []) for d in devices)
    assert "deploy" not in cpu, "the default api must not require a GPU"
    assert re.fullmatch(r"cuda|cu\d+", gpu["build"]["args"]["TORCH_VARIANT"])
    assert cpu["build"]["args"]["TORCH_VARIANT"] == "cpu"
    assert gpu["image"] != cpu["image"], "the CUDA build must not overwrite the CPU image's tag"
    assert _environment(gpu)["PAIRANK_DEVICE"] == "cuda"
    # Apart from the device, the GPU API is configured exactly like the CPU one.
    gpu_env, cpu_env = _environment(compose["services"]["api-gpu"]), _environment(compose["x-api"])
    assert set(gpu_env) == set(cpu_env)
    assert {k: v for k, v in gpu_env.items() if k != "PAIRANK_DEVICE"} == {
        k: v for k, v in cpu_env.items() if k != "PAIRANK_DEVICE"
    }
    for key in ("depends_on", "volumes", "expose"):
        assert gpu.get(key) == cpu.get(key), f"api-gpu and api differ in {key}"


def _compose_command() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_docker_compose_accepts_the_file(tmp_path: Path) -> None:
    # Offline validation against compose's own schema, when a compose client is installed (no engine
    # needed). The project directory is a temporary copy, so a developer's own .env cannot interfere.
    command = _compose_command()
    if command is None:
        pytest.skip("no `docker compose` or `docker-compose` client installed")
    (tmp_path / "docker-compose.yml").write_text(COMPOSE_FILE.read_text())
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PAIRANK_", "POSTGRES_"))}
    for profile_args in ([], ["--profile", "gpu"]):
        result = subprocess.run(
            [*command, "--project-directory", str(tmp_path), "-f", str(tmp_path / "docker-compose.yml")]
            + [*profile_args, "config", "--quiet"],
            capture_output=True,
            text=True,
            env=environment,
            cwd=ROOT,
            timeout=60,
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_api_replicas_are_reached_through_the_proxy(
    compose: dict[str, Any], resolved: dict[str, Any]
) -> None:
    services = resolved["services"]
    # Scalable: no api replica publishes a host port (two would collide); the proxy publishes one.
    for name in API_SERVICES:
        assert "ports" not in services[name], f"{name} publishes a port: `--scale api=N` would collide"
    published = [str(p.get("published") if isinstance(p, dict) else p) for p in services["proxy"]["ports"]]
    assert published and all("8000" in port for port in published)
    assert "api" in services["api-gpu"]["networks"]["default"]["aliases"]
    config = (ROOT / "docker" / "nginx.conf").read_text()
    assert "resolver 127.0.0.11" in config and "set $api_upstream http://api:8000" in config
    assert "proxy_pass $api_upstream" in config  # a variable: nginx re-resolves the replicas
    mounts = _mounts(compose["services"]["proxy"])
    assert mounts == {"/etc/nginx/conf.d/default.conf": "./docker/nginx.conf"}
