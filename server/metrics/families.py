"""The text of one scrape, written straight into Prometheus' text format (0.0.4).

A scrape of 10,000 groups is some 50,000 lines; prometheus_client's generic writer
checks and escapes every label of every sample (a second for those), so the families
here are written as text as they are read, each label value escaped once (a group's
name once for all its lines). `registry.py` hands the same text to prometheus_client's
parser where its own registry API is wanted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client.utils import floatToGoString

if TYPE_CHECKING:
    from collections.abc import Iterable

    Rows = Iterable[tuple[str, float]]

_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", '"': '\\"'})


def escape(value: str) -> str:
    """A label value as the text format quotes it (without the quotes)."""
    if "\\" in value or '"' in value or "\n" in value:
        return value.translate(_ESCAPES)
    return value


def labels(**pairs: str) -> str:
    """`{name="value",...}` of the pairs given, values escaped ("" when none)."""
    if not pairs:
        return ""
    return "{" + ",".join(f'{name}="{escape(value)}"' for name, value in pairs.items()) + "}"


def number(value: float) -> str:
    """A value as the text format writes it: an integer as it is, a float as Go does."""
    return str(value) if type(value) is int else floatToGoString(value)


class Families:
    """The families of one scrape, in the order first added; a name added again adds rows.

    A row is (labels as `labels()` writes them, value)."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}

    def add(self, name: str, kind: str, documentation: str, rows: Rows) -> None:
        lines = self._lines.get(name)
        if lines is None:
            help_text = documentation.replace("\\", "\\\\").replace("\n", "\\n")
            lines = self._lines[name] = [f"# HELP {name} {help_text}\n# TYPE {name} {kind}\n"]
        lines += [f"{name}{row_labels} {value if type(value) is int else number(value)}\n"
                  for row_labels, value in rows]

    def untyped(self, name: str, rows: Rows, documentation: str = "") -> None:
        """A Kafka bean's attribute: untyped, as the JMX exporter shows it."""
        self.add(name, "untyped", documentation or f"{name}, as the JMX exporter shows "
                 "Kafka's", rows)

    def gauge(self, name: str, rows: Rows, documentation: str = "") -> None:
        self.add(name, "gauge", documentation or name, rows)

    def counter(self, name: str, rows: Rows, documentation: str = "") -> None:
        self.add(name + "_total", "counter", documentation or name, rows)

    def text(self) -> str:
        return "".join(line for lines in self._lines.values() for line in lines)
