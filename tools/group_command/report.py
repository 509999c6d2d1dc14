"""Exit codes, warnings and errors: what a script or an operator learns besides stdout.

Exit codes: 0 success, 1 a broker error (or no broker reachable), 2 a usage error,
3 something named does not exist (group, topic, partition), 4 refused because of the
group's state (an active group whose partitions are not paused). When several
happen, the most serious wins in the order 2, 1, 4, 3.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from kcsim.admin import AdminError

OK = 0
BROKER_ERROR = 1
USAGE_ERROR = 2
NOT_FOUND = 3
REFUSED = 4
_SEVERITY = (USAGE_ERROR, BROKER_ERROR, REFUSED, NOT_FOUND, OK)


class UsageError(Exception):
    """Arguments that do not make a valid command (exit code 2, with the usage)."""


class Reporter:
    """Collects the outcome of a command; writes diagnostics to stderr."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.exit_code = OK

    def fail(self, code: int) -> None:
        if _SEVERITY.index(code) < _SEVERITY.index(self.exit_code):
            self.exit_code = code

    def print(self, text: str = "") -> None:
        print(text, file=self.out)

    def warn(self, text: str) -> None:
        print(text, file=self.err)

    def error(self, error: AdminError, subject: str | None = None) -> None:
        """A broker error with its Kafka name, message and a hint."""
        prefix = f"Error: {subject}: " if subject else "Error: "
        print(f"{prefix}{error.name}: {error.message}", file=self.err)
        if error.hint:
            print(f"  Hint: {error.hint}", file=self.err)
        self.fail(NOT_FOUND if error.not_found else BROKER_ERROR)

    def not_found(self, text: str) -> None:
        print(f"Error: {text}", file=self.err)
        self.fail(NOT_FOUND)

    def refuse(self, text: str, hint: str | None = None) -> None:
        print(f"Error: {text}", file=self.err)
        if hint:
            print(f"  Hint: {hint}", file=self.err)
        self.fail(REFUSED)
