"""Where kcsim answers differently from Apache Kafka on purpose (or not yet fixed), and why.

This list is the one source: the differential tests accept exactly these
differences, and docs/kafka-differences.md is generated from it
(`python -m tests.oracle.differences > docs/kafka-differences.md`; a test checks
the document is current).

An entry matches a difference when the scenario, API name and field path match
its patterns (shell-style, `*` for any) and the version lies in its range.
"""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass

BY_DESIGN = "by design"
KAFKA_ONLY = "Kafka-only feature"
NOT_YET_FIXED = "not yet fixed"


class _Absent:
    """Where one broker's answer has no such field or list entry at all."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT = _Absent()


@dataclass(frozen=True)
class Allowed:
    key: str
    api: str
    path: str
    status: str
    reason: str
    scenario: str = "*"
    versions: tuple[int, int] = (0, 32767)
    kcsim: object = "*"
    kafka: object = "*"

    def matches(self, scenario: str, api: str, version: int, path: str,
                kcsim: object, kafka: object) -> bool:
        return (fnmatch.fnmatchcase(scenario, self.scenario)
                and fnmatch.fnmatchcase(api, self.api)
                and self.versions[0] <= version <= self.versions[1]
                and fnmatch.fnmatchcase(path, self.path)
                and _value(self.kcsim, kcsim) and _value(self.kafka, kafka))


def _value(expected: object, actual: object) -> bool:
    return expected == "*" or expected == actual or (expected == "<absent>" and actual is ABSENT)


ALLOWED: tuple[Allowed, ...] = ()


def allowed(scenario: str, api: str, version: int, path: str,
            kcsim: object, kafka: object) -> Allowed | None:
    for entry in ALLOWED:
        if entry.matches(scenario, api, version, path, kcsim, kafka):
            return entry
    return None


# Differences that are not answers to one request: behaviour over time, clients.
NOTES: tuple[tuple[str, str], ...] = ()


def document() -> str:
    """docs/kafka-differences.md, generated from ALLOWED and NOTES."""
    from .kafka import DEFAULT_KAFKA_VERSION

    lines = [
        "# Where kcsim differs from Apache Kafka",
        "",
        "<!-- Generated from tests/oracle/differences.py by "
        "`python -m tests.oracle.differences`; do not edit by hand. -->",
        "",
        f"The oracle tier (`tests/oracle`, marker `oracle`) runs every scenario against kcsim "
        f"and a real Apache Kafka {DEFAULT_KAFKA_VERSION} broker (KRaft, fetched with Maven) and "
        "compares the answers field by field. These are the differences it accepts; any "
        "other difference fails the suite.",
        "",
        "| API | versions | field | status | why |",
        "|---|---|---|---|---|",
    ]
    for e in ALLOWED:
        lo, hi = e.versions
        versions = "all" if (lo, hi) == (0, 32767) else (f"{lo}" if lo == hi else f"{lo}-{hi}")
        where = e.path if e.scenario == "*" else f"{e.path} (scenario {e.scenario})"
        lines.append(f"| {e.api} | {versions} | `{where}` | {e.status} | {e.reason} |")
    if NOTES:
        lines += ["", "## Other observations", ""]
        for title, text in NOTES:
            lines += [f"### {title}", "", text, ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(document())
