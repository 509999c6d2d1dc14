"""What a workload is given: settings, progress output, and kcsim-beside-floor runs."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from . import servers
from .client import BenchError
from .registry import Figure, Target
from .servers import ServerError, ServerProcess

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from .baseline import Baseline

SIDES = ("floor", "kcsim")
BASELINE = "baseline"  # another revision's kcsim, shown in the floor's column (`--baseline`)


@dataclass
class Settings:
    """Durations and sizes (each is a command-line flag); `quick_run()` is the smoke run."""

    duration: float = 10.0
    rounds: int = 10
    warmup: float = 1.0
    pipeline: int = 16
    produce_seconds: float = 6.0
    produce_mib: int = 512
    produce_in_flight: int = 8
    batch_records: int = 16
    record_bytes: int = 1024
    fetch_max_bytes: int = 8 * 1024 * 1024
    startup_runs: int = 5
    pipeline_records: int = 10_000_000
    pin: bool = False
    quick: bool = False

    HELP: ClassVar[dict[str, str]] = {
        "duration": "seconds of each timed request-rate phase (per server)",
        "rounds": "slices each request-rate phase is split into, alternating the servers",
        "warmup": "seconds of untimed load before each timed phase",
        "pipeline": "requests in flight for the pipelined variants",
        "produce_seconds": "seconds of timed produce",
        "produce_mib": "produce stops after this many MiB of message values",
        "produce_in_flight": "produce requests in flight",
        "batch_records": "records per produced batch (one batch per request)",
        "record_bytes": "bytes per message value",
        "fetch_max_bytes": "max_bytes and partition_max_bytes of each fetch",
        "startup_runs": "start-ups timed (the median is reported)",
        "pipeline_records": "records in the log the Spark pipeline reads, compacts and reports on",
        "pin": "pin the server to CPU 0 and the load client to CPU 1",
    }

    @classmethod
    def quick_run(cls) -> Settings:
        return cls(duration=1.0, rounds=2, warmup=0.25, produce_seconds=1.5, produce_mib=128,
                   startup_runs=3, pipeline_records=200_000, quick=True)


class Outcome:
    """Values a measurement produced on one side, or why it could not."""

    def __init__(self, values: dict[str, float] | None = None, error: str | None = None,
                 extra: dict[str, Any] | None = None, skipped: bool = False) -> None:
        self.values = values or {}
        self.error = error
        self.extra = extra or {}
        self.skipped = skipped


NOT_RUN = Outcome(skipped=True)


Measure = Callable[["Side"], None]


class Side:
    """One server under test (kcsim or the floor) and what the workload measured on it.

    `attempt` runs a step and turns a failure into this side's error, so kcsim
    failing never stops the floor's measurement (nor the other way round).
    """

    def __init__(self, ctx: RunContext, what: str, name: str,
                 srv: ServerProcess | None) -> None:
        self.ctx = ctx
        self.what = what
        self.name = name
        self.srv = srv
        self.values: dict[str, float] = {}
        self.extra: dict[str, Any] = {}
        self.state: dict[str, Any] = {}
        self.error: str | None = None

    @property
    def server(self) -> ServerProcess:
        """The running server (workload steps only run while there is one)."""
        assert self.srv is not None
        return self.srv

    def attempt(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self.error is not None:
            return None
        try:
            result = fn(self, *args)
            if self.srv is not None and not self.srv.alive():
                raise ServerError(f"{self.name} exited during the run" + self.srv.stderr_tail())
            return result
        except (BenchError, ServerError, OSError, ValueError) as exc:
            msg = f"{type(exc).__name__}: {exc}"
            if self.srv is not None and not isinstance(exc, ServerError):
                msg += self.srv.stderr_tail()
            self.ctx.log(f"[red]{self.what} on {self.name} failed:[/] {msg}")
            self.error = msg
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
            self.ctx.log(f"[red]{self.what} on {self.name} crashed:[/] {self.error}")
        return None

    def outcome(self) -> Outcome:
        return Outcome(self.values, error=self.error, extra=self.extra)

    def report_stderr(self) -> None:
        """Anything the server logged at WARNING or above is worth a look: show it."""
        tail = self.srv.stderr_tail() if self.srv is not None else ""
        if tail and self.error is None:
            self.ctx.log(f"[yellow]{self.what}: {self.name} wrote to stderr:[/]{tail}")
            self.extra.setdefault("server_stderr", tail.strip())


class RunContext:
    """What a workload runs against: `sides` names the servers it measures ("floor" or,
    with a baseline, "baseline", then "kcsim"), `kcsim()` starts this tree's kcsim."""

    def __init__(self, settings: Settings, console: Console,
                 sides: tuple[str, ...] = SIDES, baseline: Baseline | None = None) -> None:
        self.settings = settings
        self.console = console
        self.baseline = baseline
        self.sides = tuple(BASELINE if s == "floor" and baseline else s for s in sides)
        self._kcsim_path: Path | None = None

    def on_baseline(self) -> RunContext:
        """The same run whose `kcsim()` starts the baseline: for workloads that measure
        kcsim alone, run a second time to fill the baseline's column."""
        assert self.baseline is not None
        other = RunContext(self.settings, self.console, ("kcsim",), self.baseline)
        other._kcsim_path = self.baseline.path
        return other

    def log(self, msg: str) -> None:
        self.console.log(msg)

    @property
    def server_cpu(self) -> int | None:
        return 0 if self.settings.pin else None

    @property
    def on_this_tree(self) -> bool:
        """Whether `kcsim()` starts this tree's kcsim (what in-process figures measure)."""
        return self._kcsim_path is None

    def kcsim(self, extra: list[str] | None = None, listeners: str | None = None,
              data_dir: Path | None = None, log_level: str = "WARNING") -> ServerProcess:
        return servers.kcsim(extra, cpu=self.server_cpu, listeners=listeners,
                             path=self._kcsim_path, data_dir=data_dir, log_level=log_level)

    def floor(self, table: dict[int, bytes] | None = None) -> ServerProcess:
        return servers.floor(table, cpu=self.server_cpu)

    def server(self, side: str, table: dict[int, bytes] | None = None,
               kcsim_args: list[str] | None = None) -> ServerProcess:
        """An unstarted server of side `side`: the floor answering from `table`, the
        baseline's kcsim or this tree's, each given `kcsim_args`."""
        if side == "floor":
            return self.floor(table)
        if side == BASELINE:
            assert self.baseline is not None
            return servers.kcsim(kcsim_args, cpu=self.server_cpu, path=self.baseline.path)
        return self.kcsim(kcsim_args)

    @contextmanager
    def paired(self, what: str, table: dict[int, bytes],
               kcsim_args: list[str] | None = None) -> Iterator[list[Side]]:
        """Both servers up at once, so a workload can alternate between them in short
        slices and background load on the machine hits both alike."""
        with ExitStack() as stack:
            sides = []
            for name in self.sides:
                srv = stack.enter_context(self.server(name, table, kcsim_args))
                side = Side(self, what, name, srv)
                side.attempt(_start)
                sides.append(side)
            self.log(f"{what}: {' and '.join(self.sides)} interleaved")
            yield sides
        for side in sides:
            side.report_stderr()

    def side_by_side(self, what: str, table: dict[int, bytes], measure: Measure,
                     kcsim_args: list[str] | None = None) -> dict[str, Outcome]:
        """Run `measure` against a fresh floor, then a fresh kcsim, one at a time."""
        sides = []
        for name in self.sides:
            self.log(f"{what}: {name}")
            with self.server(name, table, kcsim_args) as srv:
                side = Side(self, what, name, srv)
                side.attempt(_start)
                side.attempt(measure)
                sides.append(side)
            side.report_stderr()
        return outcomes(sides)


def _start(side: Side) -> None:
    assert side.srv is not None
    side.srv.start()


def outcomes(sides: list[Side]) -> dict[str, Outcome]:
    """Each column's outcome (the baseline's in the floor's); sides left out of the run
    show as not run."""
    out = dict.fromkeys(SIDES, NOT_RUN)
    out.update({"floor" if side.name == BASELINE else side.name: side.outcome()
                for side in sides})
    return out


def figures(workload: str, outcomes: dict[str, Outcome],
            specs: list[tuple[str, str, str, Target | None]]) -> list[Figure]:
    """One Figure per (key, metric, unit, target), kcsim's value beside the floor's."""
    result = []
    for key, metric, unit, target in specs:
        k, f = outcomes["kcsim"], outcomes["floor"]
        result.append(Figure(
            workload, metric, unit, k.values.get(key), f.values.get(key), target,
            kcsim_error=_missing(k, key),
            floor_error=_missing(f, key),
            extra={side: o.extra.get(key) for side, o in outcomes.items()
                   if o.extra.get(key) is not None},
        ))
    logs = {side: o.extra["server_stderr"] for side, o in outcomes.items()
            if "server_stderr" in o.extra}
    if logs and result:
        result[0].extra["server_stderr"] = logs
    return result


def _missing(outcome: Outcome, key: str) -> str | None:
    """Why `key` has no value on this side (None when it has one or was not run)."""
    if key in outcome.values or outcome.skipped:
        return None
    return outcome.error or "no value measured"
