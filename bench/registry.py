"""Workload registry, figures and targets shared by the runner and every workload module.

A workload is a function taking a RunContext and returning Figures; it joins the
run by decorating itself with `@workload(...)` in a module under `bench/workloads/`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

WORKLOADS: dict[str, Workload] = {}


@dataclass(frozen=True)
class Workload:
    name: str
    family: str
    help: str
    fn: Callable[[Any], list[Figure]]
    order: int
    in_process: bool = False  # measures kcsim in the bench's process: never a baseline's


def workload(name: str, family: str, order: int = 100, help: str = "",
             in_process: bool = False) -> Callable[[Callable], Callable]:
    """Register a workload under `name`; the command line selects by name or family,
    and a full run goes in `order` (then name)."""

    def register(fn: Callable) -> Callable:
        if name in WORKLOADS:
            raise RuntimeError(f"workload {name!r} registered twice")
        WORKLOADS[name] = Workload(name, family, help or (fn.__doc__ or "").strip(), fn, order,
                                   in_process)
        return fn

    return register


@dataclass(frozen=True)
class Target:
    """A pass condition: `ratio_max` compares kcsim to the floor, the others are absolute."""

    kind: str  # "ratio_max" | "min" | "max"
    value: float
    unit: str = ""

    def text(self) -> str:
        if self.kind == "ratio_max":
            return f"≤ {self.value:g}x floor"
        sign = "≥" if self.kind == "min" else "≤"
        return f"{sign} {self.value:g} {self.unit}".strip()

    def check(self, kcsim: float | None, floor: float | None) -> bool | None:
        if kcsim is None:
            return False
        if self.kind == "ratio_max":
            if not floor:
                return None
            return kcsim / floor <= self.value
        if self.kind == "min":
            return kcsim >= self.value
        return kcsim <= self.value


def ratio_max(value: float) -> Target:
    return Target("ratio_max", value)


def at_least(value: float, unit: str) -> Target:
    return Target("min", value, unit)


def at_most(value: float, unit: str) -> Target:
    return Target("max", value, unit)


@dataclass
class Figure:
    """One measured quantity for kcsim beside the same quantity for the floor."""

    workload: str
    metric: str
    unit: str
    kcsim: float | None
    floor: float | None
    target: Target | None = None
    kcsim_error: str | None = None
    floor_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    kafka: float | None = None  # the same figure on Apache Kafka, where a workload takes it
    kafka_error: str | None = None

    @property
    def ratio(self) -> float | None:
        if self.kcsim is None or not self.floor:
            return None
        return self.kcsim / self.floor

    @property
    def passed(self) -> bool | None:
        if self.target is None or (self.kcsim is None and self.kcsim_error is None):
            return None
        return self.target.check(self.kcsim, self.floor)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["target"] = None if self.target is None else {**asdict(self.target),
                                                          "text": self.target.text()}
        out["ratio"] = self.ratio
        out["passed"] = self.passed
        return out
