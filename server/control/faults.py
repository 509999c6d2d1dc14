"""Fault rules: requests a test wants answered differently, matched at the one dispatch point.

A rule names the requests it matches (an API, optionally a version, client id,
group, topic, partition or broker node id), when it fires (the first `times`
matches after letting `after` through, optionally with a seeded `probability`;
`times=None` fires until removed) and what it does: answer with a Kafka error
where the API carries one, add latency, hold the request until the test releases
it, close the connection before or after answering, or never answer.

Rules are indexed by API key: a request whose API no rule names costs one dict
lookup, and none at all while no rule is installed. Within an API they are
bucketed by the group or client id they name, so rules for other groups or
clients cost a lookup, not a test each. `FaultRule` is the plain-data
form (a msgspec struct: dicts and JSON convert to and from it); bad input is
refused with ValueError naming the field.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Literal

import msgspec
import trio

from kcsim.protocol.named_groups import groups_of

from .fields import topics_of
from .names import ApiNames, error_code, error_name

if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable, Mapping


class FaultRule(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A fault rule as plain data; see the module docstring for the meaning of each field."""

    api: str | int | list[str | int]
    version: int | None = None
    client_id: str | None = None
    group: str | None = None
    topic: str | None = None
    partition: int | None = None
    node_id: int | None = None
    times: int | None = 1
    after: int = 0
    probability: float | None = None
    seed: int | None = None
    error: str | int | None = None
    latency_ms: int = 0
    hold: bool = False
    close: Literal["before", "after"] | None = None
    no_answer: bool = False


class FaultStatus(msgspec.Struct, kw_only=True):
    """An installed rule and how it has fared: requests matched, times fired, requests held."""

    id: int
    rule: FaultRule
    matched: int
    fired: int
    held: int
    active: bool  # False once it fired `times` times or its node id is not this broker's


FIELDS = tuple(msgspec.structs.fields(FaultRule))
_FIELD_NAMES = tuple(f.name for f in FIELDS)
COORDINATOR_STATES = ("loading", "unavailable", "available")


def _int(value: Any, field: str, low: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{field}: expected {what}, got {value!r}")
    return value


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{field}: expected a string, got {value!r}")
    return value


def rule_from(rule: FaultRule | Mapping[str, Any] | None, fields: Mapping[str, Any]) -> FaultRule:
    """A FaultRule from a FaultRule, a dict or keyword arguments (not a mix of them)."""
    if rule is not None and fields:
        raise ValueError("give a rule or its fields, not both")
    if isinstance(rule, FaultRule):
        return rule
    given = dict(rule if rule is not None else fields)
    unknown = sorted(set(given) - set(_FIELD_NAMES))
    if unknown:
        raise ValueError(f"{unknown[0]}: not a fault rule field (fields: {', '.join(_FIELD_NAMES)})")
    if "api" not in given:
        raise ValueError("api: a fault rule needs the API it matches")
    return FaultRule(**given)


class Fault:
    """An installed rule, compiled: what the dispatch point checks and counts."""

    __slots__ = ("after", "by_topic", "client_id", "close", "error", "fired", "group", "hold",
                 "holding", "id", "keys", "latency_s", "matched", "no_answer", "partition", "probability",
                 "rng", "rule", "times", "topic", "version", "waits")

    def __init__(self, rule_id: int, rule: FaultRule, names: ApiNames,
                 versions: Callable[[int], tuple[int, int]]) -> None:
        self.id = rule_id
        self.keys = names.keys(rule.api)
        self.version = None if rule.version is None else _int(
            rule.version, "version", 0, "a version number >= 0")
        if self.version is not None:
            for key in self.keys:
                lo, hi = versions(key)
                if not lo <= self.version <= hi:
                    raise ValueError(f"version: {names.name(key)} v{self.version} is not served "
                                     f"(kcsim serves v{lo}-v{hi})")
        self.client_id = None if rule.client_id is None else _text(rule.client_id, "client_id")
        self.group = None if rule.group is None else _text(rule.group, "group")
        self.topic = None if rule.topic is None else _text(rule.topic, "topic")
        self.partition = None if rule.partition is None else _int(
            rule.partition, "partition", 0, "a partition number >= 0")
        if rule.node_id is not None:
            _int(rule.node_id, "node_id", 0, "a node id >= 0")
        self.times = None if rule.times is None else _int(
            rule.times, "times", 1, "a count >= 1, or None for every time")
        self.after = _int(rule.after, "after", 0, "a count >= 0")
        self.probability = rule.probability
        if self.probability is not None:
            p = self.probability
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
                raise ValueError(f"probability: expected a number in (0, 1], got {p!r}")
        if rule.seed is not None:
            _int(rule.seed, "seed", -(2**63), "an integer")
        self.rng = random.Random(rule.seed)
        self.error = None if rule.error is None else error_code(rule.error, "error")
        if self.error == 0:
            raise ValueError("error: NONE is not an error")
        latency = _int(rule.latency_ms, "latency_ms", 0, "milliseconds >= 0")
        self.latency_s = latency / 1000.0
        if not isinstance(rule.hold, bool):
            raise ValueError(f"hold: expected true or false, got {rule.hold!r}")
        if not isinstance(rule.no_answer, bool):
            raise ValueError(f"no_answer: expected true or false, got {rule.no_answer!r}")
        self.hold = rule.hold
        self.no_answer = rule.no_answer
        if rule.close not in (None, "before", "after"):
            raise ValueError(f"close: expected 'before' or 'after', got {rule.close!r}")
        self.close = rule.close
        ends = [n for n, on in (("error", self.error is not None), ("close='before'", self.close == "before"),
                                ("no_answer", self.no_answer)) if on]
        if len(ends) > 1:
            raise ValueError(f"{ends[1].split('=')[0]}: cannot be combined with {ends[0]} "
                             "(each decides the answer)")
        if not (ends or latency or self.hold or self.close):
            raise ValueError("error: a fault rule needs an action (error, latency_ms, hold, "
                             "close or no_answer)")
        # The plain form keeps what was given, with the error by its name.
        self.rule = msgspec.structs.replace(
            rule, error=error_name(self.error) if self.error is not None else None)
        self.matched = 0
        self.fired = 0
        self.holding: list[trio.Event] = []  # requests held now
        self.waits = self.latency_s > 0 or self.hold or self.no_answer
        self.by_topic = self.topic is not None or self.partition is not None

    def topics_match(self, request: Any, name_of: Callable[[uuid.UUID], str | None]) -> bool:
        """Whether the request names the rule's topic and partition (those given)."""
        for topic, partition in topics_of(request, name_of):
            if ((self.topic is None or topic == self.topic)
                    and (self.partition is None or partition == self.partition)):
                return True
        return False

    def triggered(self) -> bool:
        """Count a matching request; True when the rule fires on it."""
        self.matched += 1
        if self.matched <= self.after:
            return False
        if self.probability is not None and self.rng.random() >= self.probability:
            return False
        self.fired += 1
        return True

    @property
    def spent(self) -> bool:
        return self.times is not None and self.fired >= self.times


def _rule_id(fault: Fault) -> int:
    return fault.id


class ApiRules:
    """The active rules of one API, bucketed so that a request costs a lookup per bucket
    rather than a test per rule: rules naming a group by that group, rules naming a client
    id (and no group) by that client id, the others in one list."""

    __slots__ = ("by_client", "by_group", "fired", "others")

    def __init__(self, fired: Callable[[Fault], None]) -> None:
        self.fired = fired  # told of a rule that fired (the request's answer is its to make)
        self.by_group: dict[str, list[Fault]] = {}
        self.by_client: dict[str, list[Fault]] = {}
        self.others: list[Fault] = []

    def _table(self, fault: Fault) -> tuple[dict[str, list[Fault]] | None, str]:
        """Where a rule goes: (table, key), or (None, "") for the list of the others."""
        if fault.group is not None:
            return self.by_group, fault.group
        if fault.client_id is not None:
            return self.by_client, fault.client_id
        return None, ""

    def add(self, fault: Fault) -> None:
        table, key = self._table(fault)
        (self.others if table is None else table.setdefault(key, [])).append(fault)

    def remove(self, fault: Fault) -> None:
        table, key = self._table(fault)
        bucket = self.others if table is None else table.get(key, [])
        if fault in bucket:
            bucket.remove(fault)
            if table is not None and not bucket:
                del table[key]

    def __contains__(self, fault: Fault) -> bool:
        table, key = self._table(fault)
        return fault in (self.others if table is None else table.get(key, ()))

    def __bool__(self) -> bool:
        return bool(self.others or self.by_group or self.by_client)

    def pick(self, version: int, client_id: str, request: Any,
             name_of: Callable[[uuid.UUID], str | None]) -> Fault | None:
        """The first rule, in the order installed, that fires on this request (its counts
        updated), if any. Only the rules of the request's groups and client id, and those
        naming neither, are tried: one call per request when none of them is installed."""
        found = self.others
        merged = False
        if self.by_client:
            more = self.by_client.get(client_id)
            if more:
                found, merged = found + more, bool(found)
        if self.by_group:
            for group in groups_of(request):
                more = self.by_group.get(group)
                if more:
                    found, merged = found + more, merged or bool(found)
        if not found:
            return None
        for fault in sorted(found, key=_rule_id) if merged else found:
            if fault.version is not None and fault.version != version:
                continue
            if fault.client_id is not None and fault.client_id != client_id:
                continue
            if fault.by_topic and not fault.topics_match(request, name_of):
                continue
            if fault.triggered():
                self.fired(fault)
                return fault
        return None


class Faults:
    """The rules installed on one broker (used on the broker's trio thread)."""

    def __init__(self, names: ApiNames, versions: Callable[[int], tuple[int, int]],
                 node_id: int, group_apis: tuple[int, ...], find_coordinator: int | None,
                 on_change: Callable[[], None]) -> None:
        self.names = names
        self._versions = versions
        self._node_id = node_id
        self._group_apis = group_apis
        self._find_coordinator = find_coordinator
        self._on_change = on_change
        self.index: dict[int, ApiRules] = {}  # API key -> active rules, read per request
        self._rules: dict[int, Fault] = {}
        self._next_id = 1
        self._coordinator: dict[str, int] = {}  # group -> the rule making its coordinator fail

    # -- the dispatch point -----------------------------------------------------

    def _fired(self, fault: Fault) -> None:
        if fault.spent:
            self._unindex(fault)
        self._on_change()

    async def hold(self, fault: Fault) -> None:
        """Park a request until the test releases it (or removes the rule)."""
        released = trio.Event()
        fault.holding.append(released)
        self._on_change()
        try:
            await released.wait()
        finally:
            if released in fault.holding:
                fault.holding.remove(released)

    # -- what tests do ------------------------------------------------------------

    def add(self, rule: FaultRule | Mapping[str, Any] | None = None, **fields: Any) -> int:
        """Install a rule; returns its id. ValueError names the field that is wrong."""
        spec = rule_from(rule, fields)
        fault = Fault(self._next_id, spec, self.names, self._versions)
        self._next_id += 1
        self._rules[fault.id] = fault
        if spec.node_id is None or spec.node_id == self._node_id:
            for key in fault.keys:
                rules = self.index.get(key)
                if rules is None:
                    rules = self.index[key] = ApiRules(self._fired)
                rules.add(fault)
        self._on_change()
        return fault.id

    def get(self, rule_id: int) -> FaultStatus:
        return self._status(self._rule(rule_id))

    def list(self) -> list[FaultStatus]:
        return [self._status(f) for f in self._rules.values()]

    def remove(self, rule_id: int) -> FaultStatus:
        """Uninstall a rule (its held requests go on); returns its final counts."""
        fault = self._rule(rule_id)
        del self._rules[rule_id]
        self._unindex(fault)
        self._release(fault)
        for group, rid in list(self._coordinator.items()):
            if rid == rule_id:
                del self._coordinator[group]
        self._on_change()
        return self._status(fault, active=False)

    def clear(self) -> None:
        """Remove every rule and let every held request go on."""
        for rule_id in list(self._rules):
            self.remove(rule_id)

    def release(self, rule_id: int | None = None) -> int:
        """Let the requests held by a rule (or by every rule) go on; returns how many."""
        faults = self._rules.values() if rule_id is None else [self._rule(rule_id)]
        released = sum(self._release(f) for f in faults)
        if released:
            self._on_change()
        return released

    def coordinator(self, group: str, state: str) -> int | None:
        """Make a group's coordinator `loading` (COORDINATOR_LOAD_IN_PROGRESS for its group
        requests), `unavailable` (COORDINATOR_NOT_AVAILABLE, FindCoordinator too) or
        `available` again. Returns the id of the rule that does it (None for available)."""
        _text(group, "group")
        if state not in COORDINATOR_STATES:
            raise ValueError(f"state: expected one of {', '.join(COORDINATOR_STATES)}, got {state!r}")
        previous = self._coordinator.pop(group, None)
        if previous is not None:
            self.remove(previous)
        if state == "available":
            return None
        apis = list(self._group_apis)
        if state == "unavailable" and self._find_coordinator is not None:
            apis.append(self._find_coordinator)
        error = "COORDINATOR_LOAD_IN_PROGRESS" if state == "loading" else "COORDINATOR_NOT_AVAILABLE"
        rule_id = self.add(api=[self.names.name(k) for k in apis], group=group, error=error,
                           times=None)
        self._coordinator[group] = rule_id
        return rule_id

    # -- internals ------------------------------------------------------------------

    def _rule(self, rule_id: int) -> Fault:
        fault = self._rules.get(rule_id) if isinstance(rule_id, int) else None
        if fault is None:
            raise ValueError(f"rule_id: no fault rule {rule_id!r} is installed")
        return fault

    def _unindex(self, fault: Fault) -> None:
        for key in fault.keys:
            rules = self.index.get(key)
            if rules is not None and fault in rules:
                rules.remove(fault)
                if not rules:
                    del self.index[key]

    @staticmethod
    def _release(fault: Fault) -> int:
        held, fault.holding = fault.holding, []
        for event in held:
            event.set()
        return len(held)

    def _status(self, fault: Fault, active: bool | None = None) -> FaultStatus:
        if active is None:
            active = any(fault in self.index.get(k, ()) for k in fault.keys)
        return FaultStatus(id=fault.id, rule=fault.rule, matched=fault.matched,
                           fired=fault.fired, held=len(fault.holding), active=active)
