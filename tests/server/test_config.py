"""Settings come from defaults, a TOML file, KCSIM_* variables and flags, in that order."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kcsim.server import config


def test_precedence_file_env_flag(tmp_path):
    toml = tmp_path / "kcsim.toml"
    toml.write_text('port = 9100\nnode_id = 7\ndata_dir = "/tmp/from-file"\n')
    cfg = config.load(str(toml), env={"KCSIM_PORT": "9200", "KCSIM_AUTO_CREATE_TOPICS": "false"})
    assert (cfg.port, cfg.node_id, cfg.data_dir, cfg.auto_create_topics) == (
        9200, 7, "/tmp/from-file", False)
    cfg = config.load(str(toml), env={"KCSIM_PORT": "9200"}, port=9300)
    assert cfg.port == 9300


def test_config_file_from_environment(tmp_path):
    toml = tmp_path / "kcsim.toml"
    toml.write_text("[kcsim]\ndefault_partitions = 4\n")
    assert config.load(env={"KCSIM_CONFIG": str(toml)}).default_partitions == 4


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"KCSIM_PORT": "ninety"}, "KCSIM_PORT"),
        ({"KCSIM_FSYNC": "sometimes"}, "fsync"),
        ({"KCSIM_PAUSE_API_KEYS": "1000,1000,1001"}, "pause_api_keys"),
        ({"KCSIM_MIN_SESSION_TIMEOUT_MS": "9000", "KCSIM_MAX_SESSION_TIMEOUT_MS": "8000"}, "min_session"),
        ({"KCSIM_MAX_CONNECTIONS": "-1"}, "max_connections"),
    ],
)
def test_bad_settings_are_named(env, message):
    with pytest.raises(ValueError, match=message):
        config.load(env=env)


def test_unknown_key_in_file_is_refused(tmp_path):
    toml = tmp_path / "bad.toml"
    toml.write_text("prot = 1\n")
    with pytest.raises(ValueError, match="unknown setting 'prot'"):
        config.load(str(toml), env={})


def test_extension_keys_map_wire_to_declared():
    cfg = config.load(env={}, pause_api_keys="2000,2001,2002")
    assert config.extension_keys(cfg) == {2000: 1000, 2001: 1001, 2002: 1002}
    assert config.extension_keys(config.load(env={}, extensions=False)) == {}


def test_serve_help_documents_every_setting():
    out = subprocess.run([sys.executable, "-m", "kcsim", "serve", "--help"],
                         capture_output=True, text=True, check=True).stdout
    for name in config.HELP:
        assert "--" + name.replace("_", "-") in out
    assert "KCSIM_PORT" in out


def test_bad_flag_value_exits_with_usage_error():
    proc = subprocess.run([sys.executable, "-m", "kcsim", "serve", "--fsync", "maybe"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "fsync" in proc.stderr


def test_unknown_assignor_is_a_usage_error():
    with pytest.raises(ValueError, match="consumer_group_assignors"):
        config.load(env={"KCSIM_CONSUMER_GROUP_ASSIGNORS": "uniform,sticky"})


def test_consumer_group_settings_reach_the_coordinator():
    from kcsim.server.app import group_config

    cfg = config.load(env={}, consumer_group_assignors="range, uniform",
                      consumer_group_heartbeat_interval_ms=1000)
    gc = group_config(cfg)
    assert gc.consumer_group_assignors == ("range", "uniform")
    assert gc.consumer_group_heartbeat_interval_ms == 1000
