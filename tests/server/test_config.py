"""Settings come from defaults, a TOML file, KCSIM_* variables and flags, in that order,
and every value is checked against its declared type and range before the server starts."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys

import pytest

from kcsim.coordinator import GroupConfig
from kcsim.server import cli, config
from kcsim.server.app import build, group_config
from kcsim.server.embedded import EmbeddedServer
from kcsim.server.in_trio import open_trio_kcsim


def test_precedence_file_env_flag(tmp_path):
    toml = tmp_path / "kcsim.toml"
    toml.write_text('port = 9100\nnode_id = 7\ndata_dir = "/tmp/from-file"\n')
    cfg = config.load(str(toml), env={"KCSIM_PORT": "9200", "KCSIM_AUTO_CREATE_TOPICS": "false"})
    assert (cfg.port, cfg.node_id, cfg.data_dir, cfg.auto_create_topics) == (
        9200, 7, "/tmp/from-file", False)
    cfg = config.load(str(toml), env={"KCSIM_PORT": "9200"}, flags={"port": "9300"})
    assert cfg.port == 9300
    assert config.load(str(toml), env={"KCSIM_PORT": "9200"}, flags={"port": "9300"},
                       port=9400).port == 9400


def test_config_file_from_environment(tmp_path):
    toml = tmp_path / "kcsim.toml"
    toml.write_text("[kcsim]\ndefault_partitions = 4\n")
    assert config.load(env={"KCSIM_CONFIG": str(toml)}).default_partitions == 4


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"KCSIM_PORT": "ninety"}, "KCSIM_PORT=ninety: expected an integer from 0 to 65535"),
        ({"KCSIM_PORT": "70000"}, "KCSIM_PORT=70000: expected an integer from 0 to 65535"),
        ({"KCSIM_PORT": "-1"}, "KCSIM_PORT=-1: expected an integer from 0 to 65535"),
        ({"KCSIM_FSYNC": "sometimes"},
         "KCSIM_FSYNC=sometimes: expected one of always, interval, never"),
        ({"KCSIM_FSYNC_INTERVAL_MS": "0"}, "KCSIM_FSYNC_INTERVAL_MS=0: expected an integer >= 1"),
        ({"KCSIM_IN_MEMORY": "perhaps"}, "KCSIM_IN_MEMORY=perhaps: expected true or false"),
        ({"KCSIM_DEFAULT_PARTITIONS": "0"}, "KCSIM_DEFAULT_PARTITIONS=0: expected an integer from 1"),
        ({"KCSIM_SEGMENT_BYTES": "10"}, "KCSIM_SEGMENT_BYTES=10: expected an integer from 58"),
        ({"KCSIM_INITIAL_REBALANCE_DELAY_MS": "-5"}, "KCSIM_INITIAL_REBALANCE_DELAY_MS=-5"),
        ({"KCSIM_MAX_CONNECTIONS": "-1"}, "KCSIM_MAX_CONNECTIONS=-1"),
        ({"KCSIM_DATA_DIR": ""}, "KCSIM_DATA_DIR=: expected a non-empty string"),
        ({"KCSIM_ADVERTISED_PORT": "0"}, "KCSIM_ADVERTISED_PORT=0: expected an integer from 1"),
        ({"KCSIM_LOG_LEVEL": "LOUD"},
         "KCSIM_LOG_LEVEL=LOUD: expected one of DEBUG, INFO, WARNING, ERROR"),
        ({"KCSIM_PAUSE_API_KEYS": "1000,1000,1001"},
         "KCSIM_PAUSE_API_KEYS=1000,1000,1001: expected three distinct API keys"),
        ({"KCSIM_PAUSE_API_KEYS": "1000,1001,40000"}, "KCSIM_PAUSE_API_KEYS=1000,1001,40000"),
        ({"KCSIM_CONSUMER_GROUP_ASSIGNORS": "uniform,sticky"},
         "KCSIM_CONSUMER_GROUP_ASSIGNORS=uniform,sticky: expected distinct assignor names"),
        ({"KCSIM_CONSUMER_GROUP_ASSIGNORS": "range,range"}, "KCSIM_CONSUMER_GROUP_ASSIGNORS"),
        ({"KCSIM_CONTROL_PORT": "http"}, "KCSIM_CONTROL_PORT=http: expected an integer from 0 to 65535"),
        ({"KCSIM_CONTROL_HOST": ""}, "KCSIM_CONTROL_HOST=: expected a non-empty string"),
        ({"KCSIM_MIN_CLEANABLE_DIRTY_RATIO": "1.5"},
         "KCSIM_MIN_CLEANABLE_DIRTY_RATIO=1.5: expected a number from 0.0 to 1.0"),
        ({"KCSIM_MIN_CLEANABLE_DIRTY_RATIO": "half"},
         "KCSIM_MIN_CLEANABLE_DIRTY_RATIO=half: expected a number from 0.0 to 1.0"),
        ({"KCSIM_MIN_COMPACTION_LAG_MS": "-1"},
         "KCSIM_MIN_COMPACTION_LAG_MS=-1: expected an integer >= 0"),
        ({"KCSIM_CONSUMER_GROUP_ASSIGNMENT_INTERVAL_MS": "-1"},
         "KCSIM_CONSUMER_GROUP_ASSIGNMENT_INTERVAL_MS=-1: expected an integer from 0 to"),
    ],
)
def test_bad_environment_values_are_named_with_what_is_expected(env, message):
    with pytest.raises(config.ConfigError) as excinfo:
        config.load(env=env)
    assert str(excinfo.value).startswith(message)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"KCSIM_MIN_SESSION_TIMEOUT_MS": "9000", "KCSIM_MAX_SESSION_TIMEOUT_MS": "8000"},
         "KCSIM_MIN_SESSION_TIMEOUT_MS=9000 must be at most KCSIM_MAX_SESSION_TIMEOUT_MS=8000"),
        ({"KCSIM_MIN_SESSION_TIMEOUT_MS": "2000000"},
         "KCSIM_MIN_SESSION_TIMEOUT_MS=2000000 must be at most "
         "max_session_timeout_ms (default 1800000)"),
        ({"KCSIM_CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS": "45000"},
         "KCSIM_CONSUMER_GROUP_HEARTBEAT_INTERVAL_MS=45000 must be less than "
         "consumer_group_session_timeout_ms (default 45000)"),
        ({"KCSIM_CONSUMER_GROUP_ASSIGNMENT_INTERVAL_MS": "20000"},
         "KCSIM_CONSUMER_GROUP_ASSIGNMENT_INTERVAL_MS=20000 must be at most "
         "consumer_group_max_assignment_interval_ms (default 15000)"),
        ({"KCSIM_CONSUMER_GROUP_MIN_ASSIGNMENT_INTERVAL_MS": "2000"},
         "KCSIM_CONSUMER_GROUP_MIN_ASSIGNMENT_INTERVAL_MS=2000 must be at most "
         "consumer_group_assignment_interval_ms (default 1000)"),
    ],
)
def test_settings_that_must_be_ordered_name_both(env, message):
    with pytest.raises(config.ConfigError) as excinfo:
        config.load(env=env)
    assert str(excinfo.value) == message


def test_environment_text_forms():
    cfg = config.load(env={"KCSIM_IN_MEMORY": "yes", "KCSIM_REPAIR": "ON",
                           "KCSIM_AUTO_CREATE_TOPICS": "0", "KCSIM_LOG_LEVEL": "debug",
                           "KCSIM_FSYNC": "Never", "KCSIM_PORT": " 9093 ",
                           "KCSIM_ADVERTISED_PORT": ""})
    assert (cfg.in_memory, cfg.repair, cfg.auto_create_topics) == (True, True, False)
    assert (cfg.log_level, cfg.fsync, cfg.port, cfg.advertised_port) == (
        "DEBUG", "never", 9093, None)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('initial_rebalance_delay_ms = "3000"',
         'initial_rebalance_delay_ms = "3000": expected an integer from 0 to 2147483647, '
         "not a quoted string"),
        ('in_memory = "true"', 'in_memory = "true": expected true or false, not a quoted string'),
        ("extensions = 1", "extensions = 1: expected true or false"),
        ("port = 9092.0", "port = 9092.0: expected an integer from 0 to 65535"),
        ("port = true", "port = true: expected an integer from 0 to 65535"),
        ("cluster_id = 5", "cluster_id = 5: expected a non-empty string"),
        ('fsync = "sometimes"', 'fsync = "sometimes": expected one of always, interval, never'),
        ('consumer_group_assignors = ["uniform"]',
         'consumer_group_assignors = ["uniform"]: expected distinct assignor names'),
    ],
)
def test_bad_toml_values_are_named_with_what_is_expected(tmp_path, line, message):
    toml = tmp_path / "kcsim.toml"
    toml.write_text(line + "\n")
    with pytest.raises(config.ConfigError) as excinfo:
        config.load(str(toml), env={})
    assert str(excinfo.value).startswith(f"{toml}: {message}")


def test_toml_values_of_the_declared_types_are_taken(tmp_path):
    toml = tmp_path / "kcsim.toml"
    toml.write_text('in-memory = true\nfsync = "Never"\nfsync_interval_ms = 250\n'
                    'consumer_group_assignors = "range,uniform"\nadvertised_host = "broker"\n')
    cfg = config.load(str(toml), env={})
    assert (cfg.in_memory, cfg.fsync, cfg.fsync_interval_ms, cfg.advertised_host) == (
        True, "never", 250, "broker")
    assert cfg.assignors == ("range", "uniform")


def test_compaction_settings_take_kafkas_defaults_and_names():
    cfg = config.load(env={})
    assert (cfg.min_cleanable_dirty_ratio, cfg.min_compaction_lag_ms) == (0.5, 0)
    cfg = config.load(env={"KCSIM_MIN_CLEANABLE_DIRTY_RATIO": "0.25"},
                      flags={"min_compaction_lag_ms": "1000"})
    assert (cfg.min_cleanable_dirty_ratio, cfg.min_compaction_lag_ms) == (0.25, 1000)


def test_a_ratio_may_be_written_as_an_integer_in_toml(tmp_path):
    toml = tmp_path / "kcsim.toml"
    toml.write_text("min_cleanable_dirty_ratio = 1\n")
    assert config.load(str(toml), env={}).min_cleanable_dirty_ratio == 1.0
    toml.write_text('min_cleanable_dirty_ratio = "0.5"\n')
    with pytest.raises(config.ConfigError, match="not a quoted string"):
        config.load(str(toml), env={})


def test_unknown_key_in_file_is_refused(tmp_path):
    toml = tmp_path / "bad.toml"
    toml.write_text("prot = 1\n")
    with pytest.raises(config.ConfigError, match="unknown setting 'prot' \\(did you mean 'port'\\?\\)"):
        config.load(str(toml), env={})


def test_unreadable_or_malformed_file_is_named(tmp_path):
    with pytest.raises(config.ConfigError, match=re.escape("missing.toml: cannot read")):
        config.load(str(tmp_path / "missing.toml"), env={})
    toml = tmp_path / "broken.toml"
    toml.write_text("port = \n")
    with pytest.raises(config.ConfigError, match=re.escape("broken.toml: not valid TOML")):
        config.load(str(toml), env={})


def test_typed_overrides_are_checked_too():
    with pytest.raises(config.ConfigError, match="port=70000: expected an integer from 0 to 65535"):
        config.load(env={}, port=70000)
    with pytest.raises(config.ConfigError, match="unknown setting 'prot'"):
        config.load(env={}, prot=1)


def test_a_config_built_in_code_is_checked_when_the_server_is_built():
    with pytest.raises(config.ConfigError, match="fsync_interval_ms=0: expected an integer >= 1"):
        build(config.Config(fsync_interval_ms=0, in_memory=True))


def test_an_embedded_server_checks_a_config_built_in_code_at_each_start():
    server = EmbeddedServer(config.Config(port=0, in_memory=True, fsync_interval_ms=0))
    for _ in range(2):
        with pytest.raises(config.ConfigError, match="fsync_interval_ms=0: expected an integer"):
            server.start()


async def test_a_trio_server_checks_a_config_built_in_code() -> None:
    with pytest.raises(config.ConfigError, match="fsync_interval_ms=0: expected an integer"):
        async with open_trio_kcsim(config.Config(port=0, in_memory=True, fsync_interval_ms=0)):
            pass


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
    assert "one of always, interval, never (default: interval)" in " ".join(out.split())


# -- the group coordinator's settings ---------------------------------------------------


def test_group_settings_default_to_the_coordinators_own():
    # But for the event log: a broker writes it unless told not to, a bare coordinator does not.
    assert group_config(config.Config()) == dataclasses.replace(GroupConfig(), events=True)
    assert group_config(config.load(env={}, events=False)) == GroupConfig()


def test_the_assignment_interval_defaults_to_kafkas_and_may_be_zero():
    defaults = config.load(env={})
    assert (defaults.consumer_group_assignment_interval_ms,
            defaults.consumer_group_min_assignment_interval_ms,
            defaults.consumer_group_max_assignment_interval_ms) == (1000, 0, 15000)
    at_once = config.load(env={"KCSIM_CONSUMER_GROUP_ASSIGNMENT_INTERVAL_MS": "0"})
    assert group_config(at_once).consumer_group_assignment_interval_ms == 0


def test_every_group_setting_reaches_the_coordinator():
    fixed = {"new_member_join_timeout_ms"}  # Kafka's constant, not a broker setting
    names = {f.name for f in dataclasses.fields(GroupConfig)} - fixed
    assert names <= set(config.SETTINGS)
    defaults = config.Config()
    changed = {name: _another(getattr(defaults, name))
               for name in names if name != "consumer_group_assignors"}
    cfg = config.load(env={}, consumer_group_assignors="range, uniform", **changed)
    gc = group_config(cfg)
    assert gc.consumer_group_assignors == ("range", "uniform")
    assert {name: getattr(gc, name) for name in changed} == changed


def _another(value: int | bool) -> int | bool:
    """A value of the setting other than its default."""
    if isinstance(value, bool):
        return not value
    return value + (1 if value < 2**31 - 1 else -1)


@pytest.mark.parametrize(("argv", "on"), [([], True), (["--events"], True),
                                           (["--no-events"], False)])
def test_the_events_flag_reaches_both_coordinators(argv, on):
    cfg = cli.serve_config(cli.parser().parse_args(["serve", "--in-memory", *argv]), {})
    server = build(cfg)
    try:
        assert server.broker.groups is not None
        assert server.broker.groups.config.events is on
        # Transactions write their events into the same log, or none.
        assert (server.broker.transactions.events is server.broker.groups.events) is on
    finally:
        server.broker.topics.close()


# -- the durability settings reach the writer ---------------------------------------------


def _writer_of(cfg: config.Config) -> tuple[str, int]:
    server = build(cfg)
    try:
        writer = server.durability.writer
        return writer.policy, writer.interval_ms
    finally:
        server.broker.topics.close()
        server.durability.close()


def test_durability_defaults_to_an_fsync_every_second(tmp_path):
    assert _writer_of(config.load(env={}, data_dir=str(tmp_path))) == ("interval", 1000)


@pytest.mark.parametrize("source", ["flag", "env", "toml"])
@pytest.mark.parametrize(("policy", "interval_ms"), [("interval", 250), ("always", 40),
                                                      ("never", 5000)])
def test_fsync_settings_reach_the_running_writer(tmp_path, source, policy, interval_ms):
    data_dir = str(tmp_path / "data")
    argv = ["serve", "--data-dir", data_dir]
    env: dict[str, str] = {}
    if source == "flag":
        argv += ["--fsync", policy, "--fsync-interval-ms", str(interval_ms)]
    elif source == "env":
        env = {"KCSIM_FSYNC": policy, "KCSIM_FSYNC_INTERVAL_MS": str(interval_ms)}
    else:
        toml = tmp_path / "kcsim.toml"
        toml.write_text(f'fsync = "{policy}"\nfsync_interval_ms = {interval_ms}\n')
        argv += ["--config", str(toml)]
    cfg = cli.serve_config(cli.parser().parse_args(argv), env)
    assert _writer_of(cfg) == (policy, interval_ms)


# -- what a user sees: `kcsim serve` refuses to start, exit status 2 ------------------------


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`kcsim serve` that must refuse to start (a server that starts hits the timeout)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KCSIM_")}
    return subprocess.run([sys.executable, "-m", "kcsim", "serve", "--in-memory", *args],
                          capture_output=True, text=True, env={**clean, **(env or {})},
                          timeout=30)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('initial_rebalance_delay_ms = "3000"\n',
         'initial_rebalance_delay_ms = "3000": expected an integer from 0 to 2147483647, '
         "not a quoted string"),
        ('in_memory = "false"\n',
         'in_memory = "false": expected true or false, not a quoted string'),
        ("[kcsim]\nprot = 9093\n", "unknown setting 'prot' (did you mean 'port'?)"),
        ("control_port = 70000\n", "control_port = 70000: expected an integer from 0 to 65535"),
    ],
)
def test_serve_refuses_a_bad_toml_value(tmp_path, toml, message):
    path = tmp_path / "kcsim.toml"
    path.write_text(toml)
    proc = _serve("--config", str(path))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"kcsim: {path}: {message}"


@pytest.mark.parametrize(("name", "value"), [("KCSIM_PORT", "abc"), ("KCSIM_PORT", "70000"),
                                           ("KCSIM_CONTROL_PORT", "9644x")])
def test_serve_refuses_a_bad_environment_value(name, value):
    proc = _serve(env={name: value})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f"kcsim: {name}={value}: expected an integer from 0 to 65535")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--port", "70000"], "--port 70000: expected an integer from 0 to 65535"),
        (["--fsync-interval-ms", "0"], "--fsync-interval-ms 0: expected an integer >= 1"),
        (["--fsync", "maybe"], "--fsync maybe: expected one of always, interval, never"),
        (["--control-port", "-1"], "--control-port -1: expected an integer from 0 to 65535"),
    ],
)
def test_serve_refuses_a_bad_flag_value(args, message):
    proc = _serve(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"kcsim: {message}"


@pytest.mark.parametrize("name", sorted(config.SETTINGS))
def test_every_default_is_a_value_its_setting_accepts(name: str) -> None:
    """A setting left at its default passes the check a given value does."""
    setting = config.SETTINGS[name]
    config._convert(setting, setting.default, name, text=False)
