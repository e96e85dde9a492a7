"""Finding and configuring the peers (no peer is started here)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bench import peers


def test_litellm_config_is_lean() -> None:
    config = yaml.safe_load(peers.litellm_config("http://127.0.0.1:9"))
    assert config["model_list"][0]["litellm_params"]["api_base"] == "http://127.0.0.1:9/v1"
    assert config["litellm_settings"]["telemetry"] is False
    assert config["litellm_settings"]["callbacks"] == [] and config["litellm_settings"]["success_callback"] == []
    assert "database_url" not in config["general_settings"] and "master_key" not in config["general_settings"]
    assert peers.LITELLM_ENV_VARS["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


def test_find_litellm_prefers_the_explicit_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    given, env = tmp_path / "given", tmp_path / "env"
    given.write_text("")
    env.write_text("")
    monkeypatch.setenv(peers.LITELLM_ENV, str(env))
    assert peers.find_litellm(str(given)) == str(given)
    assert peers.find_litellm(None) == str(env)


def test_find_litellm_refuses_a_named_path_that_does_not_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(peers.LITELLM_ENV, str(tmp_path / "missing"))
    assert peers.find_litellm(None) is None
