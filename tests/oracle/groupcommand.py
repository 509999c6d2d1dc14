"""Kafka's kafka-consumer-groups (ConsumerGroupCommand) and `kcsim consumer-groups`, run as
processes, and their output normalised so runs against different brokers compare.

`kafka-tools` is fetched with Maven into `<repo>/.cache/kafka-tools/<version>` once.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .kafka import CACHE, KafkaUnavailable, maven_jars

if TYPE_CHECKING:
    from pathlib import Path

TOOLS_VERSION = os.environ.get("KCSIM_ORACLE_TOOLS_VERSION", "4.3.1")
MAIN = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
RUN_TIMEOUT_S = 120

# A classic member id (client id, '-', UUID) and a KIP-848 member id (22-char base64 UUID).
_CLASSIC_MEMBER = re.compile(r"\S+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HOST = re.compile(r"/127\.0\.0\.1\b")


@dataclass(frozen=True)
class Ran:
    """What a command printed, normalised: exit code, stdout lines, stderr lines."""

    code: int
    out: tuple[str, ...]
    err: tuple[str, ...]


def tool_jars() -> list[Path]:
    return maven_jars(CACHE / "kafka-tools" / TOOLS_VERSION,
                      [("org.apache.kafka", "kafka-tools", TOOLS_VERSION)])


def kafka_command(bootstrap: str, *args: str, cwd: Path) -> Ran:
    """Kafka's own ConsumerGroupCommand against `bootstrap`."""
    java = shutil.which("java")
    if java is None:
        raise KafkaUnavailable("java not found on PATH")
    cmd = [java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
           "-Dlog4j2.level=ERROR", "-cp", os.pathsep.join(map(str, tool_jars())), MAIN,
           "--bootstrap-server", bootstrap, *args]
    return _run(cmd, bootstrap, cwd)


def kcsim_command(bootstrap: str, *args: str, cwd: Path) -> Ran:
    """`kcsim consumer-groups` against `bootstrap`."""
    cmd = [sys.executable, "-m", "kcsim", "consumer-groups", "--bootstrap-server", bootstrap, *args]
    return _run(cmd, bootstrap, cwd)


def _run(cmd: list[str], bootstrap: str, cwd: Path) -> Ran:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                          check=False, stdin=subprocess.DEVNULL, cwd=cwd)
    return Ran(proc.returncode, normalise(proc.stdout, bootstrap), normalise(proc.stderr, bootstrap))


def normalise(text: str, bootstrap: str) -> tuple[str, ...]:
    """Lines with runs of blanks made one (column widths), member ids, hosts and the
    broker's address replaced by placeholders, log noise and blank lines dropped."""
    lines = []
    for line in text.splitlines():
        if line.startswith(("SLF4J", "WARNING: ")) or not line.strip():
            continue
        line = line.replace(bootstrap, "<broker>")
        line = _CLASSIC_MEMBER.sub("<member>", line)
        line = _HOST.sub("<host>", line)
        lines.append(" ".join(line.split()))
    return tuple(lines)
