"""Differential runs: the same scenario against kcsim and a real Kafka, answers compared.

A scenario is a function `scenario(run, *args)` that talks to one broker through
`run` (raw requests built with kcsim's own codec, on as many connections as it
has members). `compare` runs it once against each broker, normalises every
answer the scenario marked for comparison (volatile fields, see below), and compares
the two transcripts field by field. A difference fails unless
`differences.ALLOWED` lists it with its reason.

What is normalised before comparing, and why, is listed in
`differences.NORMALISED` (and so in docs/kafka-differences.md).
"""

from __future__ import annotations

import os
import re
import socket
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import error_name
from kcsim.server.features import SUPPORTED as FEATURES
from tests.server.rawkafka import Frames, decode_response, request_frame

from . import differences
from .differences import ABSENT as _ABSENT

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

CLIENT_ID = "kcsim-oracle"
CALL_TIMEOUT_S = 30.0
API_VERSIONS = 18
_UUID_TAIL = re.compile(r"^(.*)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
_ZERO_UUID = "00000000-0000-0000-0000-000000000000"
_MEMBER_FIELDS = frozenset({"member_id", "leader"})
_EPOCH_FIELDS = frozenset({"member_epoch", "group_epoch", "assignment_epoch"})
_EPOCH_APIS = frozenset({68, 69, 88, 89})
_TOPIC_LISTS = frozenset({3, 19})  # Metadata and CreateTopics name topic ids
_DROPPED = frozenset({"throttle_time_ms"})
_UNORDERED = frozenset({"subscribed_topic_names", "partitions"})
_KEYS = ("api_key", "group_id", "name", "topic_name", "topic_id", "partition_index",
         "member_id", "key", "error_code")


class Connection:
    """One blocking connection speaking raw Kafka requests; answers come back in order."""

    def __init__(self, host: str, port: int, client_id: str = CLIENT_ID) -> None:
        self.sock = socket.create_connection((host, port), timeout=CALL_TIMEOUT_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client_id = client_id
        self._corr = 0
        self._pending: list[tuple[int, int, int]] = []
        self._frames = Frames()
        self._ready: list[bytes] = []

    def send(self, api_key: int, version: int, request: Any) -> None:
        self._corr += 1
        self.sock.sendall(request_frame(api_key, version, self._corr, request, self.client_id))
        self._pending.append((self._corr, api_key, version))

    def receive(self) -> Any:
        corr, api_key, version = self._pending.pop(0)
        while not self._ready:
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError(f"{APIS[api_key].name} v{version}: connection closed")
            self._ready += self._frames.feed(data)
        got, response = decode_response(api_key, version, self._ready.pop(0))
        assert got == corr, f"correlation id {got}, expected {corr}"
        return response

    def call(self, api_key: int, version: int, request: Any) -> Any:
        self.send(api_key, version, request)
        return self.receive()

    def close(self) -> None:
        self.sock.close()


@dataclass
class Endpoint:
    """A broker under comparison and the API versions it serves."""

    name: str
    host: str
    port: int
    versions: dict[int, tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        conn = Connection(self.host, self.port)
        try:
            answer = conn.call(API_VERSIONS, 3, request_class(API_VERSIONS)(
                client_software_name=CLIENT_ID, client_software_version="1"))
        finally:
            conn.close()
        self.versions = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}


def shared_versions(api_key: int, *brokers: Endpoint) -> list[int]:
    """The versions of an API every broker serves and kcsim's codec knows."""
    spec = APIS[api_key].request.valid
    lo, hi = spec.lo, spec.hi if spec.hi is not None else spec.lo
    for broker in brokers:
        if api_key not in broker.versions:
            return []
        b_lo, b_hi = broker.versions[api_key]
        lo, hi = max(lo, b_lo), min(hi, b_hi)
    return list(range(lo, hi + 1))


@dataclass
class Step:
    """One compared answer: which API and version, and its normalised fields."""

    label: str
    api_key: int
    version: int
    answer: Any

    @property
    def api(self) -> str:
        return APIS[self.api_key].name


class Ids:
    """Stable placeholders for the random ids a broker hands out, in order of appearance."""

    def __init__(self) -> None:
        self.members: dict[str, str] = {}
        self.topics: dict[str, str] = {}
        self.epochs: dict[tuple[str, int], str] = {}

    def member(self, value: str) -> str:
        if value == "":
            return value
        if value not in self.members:
            self.members[value] = f"member#{len(self.members) + 1}"
        match = _UUID_TAIL.match(value)
        prefix = match.group(1) if match else "<not client-uuid>"
        return f"{prefix}-<{self.members[value]}>"

    def epoch(self, group: str, value: int) -> int | str:
        if value <= 0:
            return value
        if (group, value) not in self.epochs:
            n = sum(1 for g, _ in self.epochs if g == group)
            self.epochs[(group, value)] = f"e#{n + 1}"
        return self.epochs[(group, value)]

    def name_topics(self, answer: Any) -> None:
        """Learn topic ids from an answer listing topics with their names."""
        for t in answer.topics:
            tid = str(t.topic_id)
            if t.name and tid != _ZERO_UUID and tid not in self.topics:
                self.topics[tid] = f"<id of {t.name}>"

    def topic(self, value: str) -> str:
        if value == _ZERO_UUID:
            return "<zero>"
        if value not in self.topics:
            self.topics[value] = f"<topic#{len(self.topics) + 1}>"
        return self.topics[value]


def _builtins(value: Any) -> Any:
    return msgspec.to_builtins(value, builtin_types=(bytes, uuid.UUID), str_keys=True)


def _keyed(items: list[Any]) -> list[Any]:
    """A list of structs in a canonical order (by identifying field, then content)."""
    return sorted(items, key=lambda item: repr(sorted(item.items())) if isinstance(item, dict) else repr(item))


class Normaliser:
    """Turns one decoded answer (or request) into plain data with volatile fields replaced."""

    def __init__(self, ids: Ids, served: set[int] | None = None) -> None:
        self.ids = ids
        self.served = served
        self._epochs = False
        self._group = ""

    def __call__(self, api_key: int, message: Any, group: str = "") -> Any:
        """`group`: the group the message is about, where it does not say (a heartbeat's)."""
        data = _builtins(message)
        if api_key == API_VERSIONS and isinstance(data, dict):
            data = self._api_versions(data)
        self._epochs, self._group = api_key in _EPOCH_APIS, group
        return self._walk(data)

    def _api_versions(self, data: dict[str, Any]) -> dict[str, Any]:
        """Only the features kcsim implements are compared (Kafka has more); the epoch is
        Kafka's metadata offset, so only "known" (>= 0) or not."""
        for name in ("supported_features", "finalized_features"):
            data[name] = [f for f in data.get(name) or () if f["name"] in FEATURES]
        if data.get("finalized_features_epoch", -1) >= 0:
            data["finalized_features_epoch"] = "<epoch>"
        if self.served is not None:
            data["api_keys"] = [k for k in data["api_keys"] if k["api_key"] in self.served]
        return data

    def _walk(self, value: Any, name: str = "") -> Any:
        if isinstance(value, dict):
            if isinstance(value.get("group_id"), str):
                self._group = value["group_id"]
            return {k: self._field(k, v) for k, v in value.items() if k not in _DROPPED}
        if isinstance(value, list):
            items = [self._walk(v, name) for v in value]
            return _keyed(items) if items and isinstance(items[0], dict) else items
        return value

    def _field(self, name: str, value: Any) -> Any:
        if value is None:
            return None
        if name in _UNORDERED and isinstance(value, list) and all(
                isinstance(x, (int, str)) for x in value):
            return sorted(value)
        if name in _MEMBER_FIELDS and isinstance(value, str):
            return self.ids.member(value)
        if name == "topic_id":
            return self.ids.topic(str(value))
        if self._epochs and name in _EPOCH_FIELDS and isinstance(value, int):
            return self.ids.epoch(self._group, value)
        if name == "cluster_id":
            return "<cluster-id>"
        if name in ("host", "port"):
            return f"<{name}>"
        if name == "timestamp" and value != -1:
            return "<time>"
        if name == "error_message":
            return "<text>" if value else value
        return self._walk(value, name)


class Run:
    """One scenario against one broker: its connections, names and compared answers."""

    def __init__(self, broker: Endpoint, prefix: str) -> None:
        self.broker = broker
        self.prefix = prefix
        self.ids = Ids()
        self.steps: list[Step] = []
        self._conns: dict[str, Connection] = {}
        self._labels: dict[str, list[tuple[str, bool, str]]] = {}
        self.normalise = Normaliser(self.ids)

    @property
    def name(self) -> str:
        return self.broker.name

    def group(self, label: str = "g") -> str:
        """A group id unique to this scenario run, the same on both brokers."""
        return f"{self.prefix}-{label}"

    def topic(self, label: str = "t") -> str:
        """A topic name unique to this scenario run, the same on both brokers."""
        return f"{self.prefix}-{label}"

    def conn(self, member: str = "main") -> Connection:
        if member not in self._conns:
            self._conns[member] = Connection(self.broker.host, self.broker.port)
        return self._conns[member]

    def send(self, api_key: int, version: int, request: Any, *, on: str = "main",
             label: str = "", compare: bool = True) -> None:
        """Send without waiting: the answer is read later with `receive(on)`."""
        group = getattr(request, "group_id", None) or ""
        if compare:
            self.normalise(api_key, request, group)  # requests introduce ids first
        self.conn(on).send(api_key, version, request)
        self._labels.setdefault(on, []).append((label, compare, group))

    def receive(self, on: str = "main") -> Any:
        conn = self.conn(on)
        _, api_key, version = conn._pending[0]
        label, compare, group = self._labels[on].pop(0)
        answer = conn.receive()
        if api_key in _TOPIC_LISTS:
            self.ids.name_topics(answer)
        if compare:
            self.steps.append(Step(label or f"{APIS[api_key].name} v{version}", api_key, version,
                                   self.normalise(api_key, answer, group)))
        return answer

    def record(self, api_key: int, version: int, answer: Any, label: str = "") -> None:
        """Compare an answer the scenario received uncompared (and perhaps trimmed)."""
        self.steps.append(Step(label or f"{APIS[api_key].name} v{version}", api_key, version,
                               self.normalise(api_key, answer)))

    def call(self, api_key: int, version: int, request: Any, *, on: str = "main",
             label: str = "", compare: bool = True) -> Any:
        self.send(api_key, version, request, on=on, label=label, compare=compare)
        return self.receive(on)

    def until(self, what: str, check: Callable[[], bool], timeout: float = 20.0) -> None:
        """Wait for a state the scenario needs (polled requests are not compared)."""
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: waited {timeout:.0f}s for {what}")
            time.sleep(0.02)

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()


@dataclass(frozen=True)
class Difference:
    scenario: str
    step: int
    label: str
    api: str
    version: int
    path: str
    kcsim: Any
    kafka: Any

    def show(self) -> str:
        def fmt(v: Any) -> str:
            if v is _ABSENT:
                return "<absent>"
            if isinstance(v, int) and self.path.endswith("error_code"):
                return f"{v} ({error_name(v)})"
            return repr(v)

        return (f"step {self.step} {self.label} ({self.api} v{self.version}) {self.path}: "
                f"kcsim {fmt(self.kcsim)} / kafka {fmt(self.kafka)}")


def _key(item: Any) -> Any:
    if isinstance(item, dict):
        for name in _KEYS:
            if name in item:
                return item[name]
    return None


def diff(a: Any, b: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, kcsim value, kafka value) for every leaf where two answers differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a.keys() | b.keys():
            yield from diff(a.get(k, _ABSENT), b.get(k, _ABSENT), f"{path}.{k}" if path else k)
    elif (isinstance(a, list) and isinstance(b, list) and (a or b)
          and all(isinstance(x, dict) for x in a + b)):
        ka: dict[Any, list[Any]] = {}
        kb: dict[Any, list[Any]] = {}
        for item in a:
            ka.setdefault(_key(item), []).append(item)
        for item in b:
            kb.setdefault(_key(item), []).append(item)
        for k in list(ka) + [k for k in kb if k not in ka]:
            xs, ys = ka.get(k, []), kb.get(k, [])
            for i in range(max(len(xs), len(ys))):
                x = xs[i] if i < len(xs) else _ABSENT
                y = ys[i] if i < len(ys) else _ABSENT
                yield from diff(x, y, f"{path}[{k}]")
    elif a != b:
        yield path, a, b


@dataclass
class Tally:
    """What the differential tier compared in this session (printed at the end)."""

    scenarios: int = 0
    steps: int = 0
    allowed: dict[str, int] = field(default_factory=dict)


TALLY = Tally()


def differences_of(scenario: str, left: Run, right: Run) -> list[Difference]:
    found: list[Difference] = []
    for i in range(max(len(left.steps), len(right.steps))):
        a = left.steps[i] if i < len(left.steps) else None
        b = right.steps[i] if i < len(right.steps) else None
        step = a or b
        assert step is not None
        if a is None or b is None or (a.api_key, a.version) != (b.api_key, b.version):
            found.append(Difference(scenario, i, step.label, step.api, step.version, "<step>",
                                    a and a.label, b and b.label))
            break
        for path, x, y in diff(a.answer, b.answer):
            found.append(Difference(scenario, i, a.label, a.api, a.version, path, x, y))
    return found


def compare(scenario: Callable[..., Any], kcsim: Endpoint, kafka: Endpoint, *args: Any,
            name: str | None = None) -> list[Difference]:
    """Run a scenario on both brokers; fail on any difference the allowlist does not name.

    Returns the allowlisted differences seen (tests may assert on them).
    """
    title = name or scenario.__name__
    prefix = f"o{uuid.uuid4().hex[:10]}"
    runs = []
    for broker in (kcsim, kafka):
        run = Run(broker, prefix)
        try:
            scenario(run, *args)
        finally:
            run.close()
        runs.append(run)
    left, right = runs
    if os.environ.get("KCSIM_ORACLE_SHOW"):
        print(f"== {title}{args}\n{transcripts(left, right)}")
    TALLY.scenarios += 1
    TALLY.steps += len(left.steps)
    unexpected, allowed = [], []
    for d in differences_of(title, left, right):
        entry = differences.allowed(title, d.api, d.version, d.path, d.kcsim, d.kafka)
        if entry is None:
            unexpected.append(d)
        else:
            allowed.append(d)
            TALLY.allowed[entry.key] = TALLY.allowed.get(entry.key, 0) + 1
    if unexpected:
        lines = "\n".join("  " + d.show() for d in unexpected)
        raise AssertionError(f"{title}: kcsim answers differently from Kafka "
                             f"{kafka_version_note(kafka)}:\n{lines}\n"
                             f"transcripts:\n{transcripts(left, right)}")
    return allowed


def kafka_version_note(kafka: Endpoint) -> str:
    return f"({kafka.name})"


def transcripts(left: Run, right: Run) -> str:
    out = []
    for i in range(max(len(left.steps), len(right.steps))):
        for run in (left, right):
            if i < len(run.steps):
                s = run.steps[i]
                out.append(f"  [{i}] {run.name:>6} {s.label}: {s.answer}")
    return "\n".join(out)


def each_version(versions: list[int], run_one: Callable[[int], Any]) -> None:
    """Run one differential scenario per version; report every failing version together."""
    failures = []
    for version in versions:
        try:
            run_one(version)
        except AssertionError as exc:
            failures.append(f"--- version {version}:\n{exc}")
    if failures:
        raise AssertionError("\n\n".join(failures))
