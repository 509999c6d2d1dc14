"""Kafka's own command-line tools (kafka-tools 4.4: ConfigCommand, TopicCommand,
DeleteRecordsCommand, TransactionsCommand, LogDirsCommand, ...) run as processes against
one broker under comparison, their output normalised as kafka-consumer-groups' is
(tests/oracle/groupcommand.py).

`kafka-tools` is fetched with Maven into `<repo>/.cache/kafka-tools/<version>` once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest

from .groupcommand import RUN_TIMEOUT_S, Ran, normalise
from .kafka import CACHE, KafkaUnavailable, maven_jars

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from .harness import Endpoint

TOOLS_VERSION = os.environ.get("KCSIM_ORACLE_CONFIG_TOOLS_VERSION", "4.4.0")


def tool(broker: Endpoint, main: str, *args: str, cwd: Path) -> Ran:
    """One of Kafka's tools (`main`) against `broker`; skips where Java or the jars are missing."""
    java = shutil.which("java")
    if java is None:
        pytest.skip("java not found on PATH")
    try:
        jars = maven_jars(CACHE / "kafka-tools" / TOOLS_VERSION,
                          [("org.apache.kafka", "kafka-tools", TOOLS_VERSION)])
    except KafkaUnavailable as exc:
        pytest.skip(f"kafka-tools {TOOLS_VERSION} unavailable: {exc}")
    bootstrap = f"{broker.host}:{broker.port}"
    cmd = [java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
           "-Dlog4j2.level=ERROR", "-cp", os.pathsep.join(map(str, jars)), main,
           "--bootstrap-server", bootstrap, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                          check=False, stdin=subprocess.DEVNULL, cwd=cwd)
    return Ran(proc.returncode, normalise(proc.stdout, bootstrap), normalise(proc.stderr, bootstrap))


def in_columns(ran: Ran, replace: Mapping[str, Callable[[str], str]]) -> Ran:
    """A tool's tables with the values of the named columns replaced: a table is a header
    line that names a column of `replace` and the lines below it, one value per word (the
    tools' tables have no blanks inside a value; a trailing empty one is left out)."""
    out, header = [], None
    for line in ran.out:
        words = line.split(" ")
        if any(word in replace for word in words):
            out.append(line)
            header = words
            continue
        if header is not None:
            line = " ".join(replace[name](value) if name in replace else value
                            for name, value in zip(header, words, strict=False))
        out.append(line)
    return Ran(ran.code, tuple(out), ran.err)


def differences(ours: Mapping[str, Ran], theirs: Mapping[str, Ran]) -> list[str]:
    """The commands whose output differs, each with both outputs, for an assertion message."""
    return [f"--- {name}\nkcsim: {ours[name]}\nKafka: {theirs[name]}"
            for name in ours if ours[name] != theirs[name]]
