"""Comparing one of Kafka's group tools against kcsim and Kafka, and kcsim's own tool against
Kafka's, on the same scenario built on both brokers (tests/oracle/test_*_group_command.py).

A test module gives its scenario's commands, its tool (Kafka's main class and kcsim's
command) and how to tidy a run (`mine`); these run them and say where they differ.
"""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import pytest

from .groupcommand import RUN_TIMEOUT_S, Ran, normalise
from .kafka import CACHE, KafkaUnavailable, maven_jars
from .toolcommand import TOOLS_VERSION, tool

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from contextlib import AbstractContextManager
    from pathlib import Path

    from .harness import Endpoint

_JAVA_ERROR = re.compile(r"Error: \S+: ")  # a Java exception's or a Kafka error's name

Commands = list[tuple[str, list[str]]]


@dataclass(frozen=True)
class At:
    """Where toolcommand.tool sends the tool (what it reads of an Endpoint)."""

    host: str
    port: int


def scenarios_on(twin: Endpoint, kafka: Endpoint,
                 make: Callable[[str, str], AbstractContextManager[Any]]
                 ) -> Iterator[tuple[Any, ...]]:
    """The same scenario (`make(bootstrap, suffix)`) on kcsim and on Kafka, under the same
    names; skipped where kafka-tools cannot be had."""
    try:
        maven_jars(CACHE / "kafka-tools" / TOOLS_VERSION,
                   [("org.apache.kafka", "kafka-tools", TOOLS_VERSION)])
    except KafkaUnavailable as exc:
        pytest.skip(f"kafka-tools unavailable, NOT RUN: {exc}")
    suffix = uuid.uuid4().hex[:8]
    with ExitStack() as stack:
        yield tuple(stack.enter_context(make(f"{e.host}:{e.port}", suffix))
                    for e in (twin, kafka))


def kafka_tool(main: str) -> Callable[..., Ran]:
    def run(broker: str, *args: str, cwd: Path) -> Ran:
        host, port = broker.rsplit(":", 1)
        return tool(cast("Any", At(host, int(port))), main, *args, cwd=cwd)
    return run


def kcsim_tool(command: str) -> Callable[..., Ran]:
    def run(broker: str, *args: str, cwd: Path) -> Ran:
        proc = subprocess.run(
            [sys.executable, "-m", "kcsim", command, "--bootstrap-server", broker, *args],
            capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
            stdin=subprocess.DEVNULL, cwd=cwd)
        return Ran(proc.returncode, normalise(proc.stdout, broker),
                   normalise(proc.stderr, broker))
    return run


def run_all(run: Callable[..., Ran], bootstrap: str, commands: Commands,
            mine: Callable[[str, Ran], Ran], tmp: Path) -> dict[str, Ran]:
    return {name: mine(name, run(bootstrap, *args, cwd=tmp)) for name, args in commands}


def text(ran: Ran, with_err: bool = True) -> str:
    return "\n".join([f"exit {ran.code}", *ran.out, *(["[stderr]", *ran.err] if with_err else [])])


def tables(ran: Ran) -> tuple[str, ...]:
    """stdout without the diagnostics Kafka's tool prints there (`Error: ...`, `* Group ...`),
    an error in a table cell named alike."""
    return tuple(_JAVA_ERROR.sub("Error: <error>: ", line) for line in ran.out
                 if not line.startswith(("Error:", "* Group")))


def same_against_both(on_kcsim: Mapping[str, Ran], on_kafka: Mapping[str, Ran]) -> list[str]:
    """The commands whose output from Kafka's tool differs between the brokers."""
    return [f"--- {name} (kcsim)\n{text(ran)}\n--- {name} (Kafka)\n{text(on_kafka[name])}"
            for name, ran in on_kcsim.items() if text(ran) != text(on_kafka[name])]


def same_as_kafkas_tool(from_kcsim: Mapping[str, Ran], from_kafka: Mapping[str, Ran],
                        diagnostics: Mapping[str, str], command: str) -> list[str]:
    """The commands where kcsim's tool prints otherwise than Kafka's (those in
    `diagnostics` compared on their tables only)."""
    found = []
    for name, mine in from_kcsim.items():
        other = from_kafka[name]
        same = (tables(mine) == tables(other) if name in diagnostics
                else text(mine) == text(other))
        if not same:
            found.append(f"--- {name} (kcsim {command})\n{text(mine)}\n"
                         f"--- {name} (Kafka's tool)\n{text(other)}")
    return found


def tool_tests(main: str, command: str, diagnostics: Mapping[str, str],
               commands: Callable[[Any], Commands], mine: Callable[[str, Ran, Any], Ran],
               ) -> tuple[Callable[..., None], Callable[..., None]]:
    """The two tests of a group tool, on the `scenarios` fixture of the module that takes
    them: Kafka's tool (`main`) prints the same against both brokers, and kcsim's
    (`command`) prints what Kafka's prints."""

    def runs(run: Callable[..., Ran], s: Any, tmp: Path) -> dict[str, Ran]:
        return run_all(run, s.bootstrap, commands(s), lambda name, ran: mine(name, ran, s), tmp)

    def test_kafka_tool_output_is_the_same_against_kcsim(scenarios: Any, tmp_path: Path) -> None:
        ours, theirs = scenarios
        found = same_against_both(runs(kafka_tool(main), ours, tmp_path),
                                  runs(kafka_tool(main), theirs, tmp_path))
        assert not found, "\n\n".join(found)

    def test_kcsim_tool_prints_kafka_tools_tables(scenarios: Any, tmp_path: Path) -> None:
        ours, theirs = scenarios
        found = same_as_kafkas_tool(runs(kcsim_tool(command), ours, tmp_path),
                                    runs(kafka_tool(main), theirs, tmp_path),
                                    diagnostics, command)
        assert not found, "\n\n".join(found)

    return test_kafka_tool_output_is_the_same_against_kcsim, test_kcsim_tool_prints_kafka_tools_tables
