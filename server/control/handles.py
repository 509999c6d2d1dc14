"""The controls a test holds: the clock, fault rules, the request log, group views, waits,
and log maintenance run at once.

The same classes serve a broker on a background thread (EmbeddedServer: every
call is run on the broker's trio thread) and a broker inside the test's own
trio run (the `kcsim_trio` fixture: calls are direct). Waits block in the
first case and are awaited in the second. Everything returned is plain data
(msgspec structs, dicts, lists): `msgspec.to_builtins` turns it into JSON.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import trio

from .acls import AclControl
from .events import (
    EventFeed,
    event_condition,
    event_filter,
    event_seq,
    find_events,
    history_of,
    next_seq,
)
from .nodes import NodeControl
from .users import Users
from .views import group_view, lag_view, paused_view, share_partition_view
from .waits import (
    DEFAULT_TIMEOUT_S,
    WaitTimeout,
    committed_condition,
    fault_condition,
    group_condition,
    request_condition,
    share_condition,
    wait_blocking,
    wait_trio,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from kcsim.coordinator.records import GroupEventValue

    from ..maintenance import MaintenanceReport
    from ..shell.server import Server
    from ..tls import ClientCert
    from .faults import FaultRule, FaultStatus
    from .request_log import RequestRecord
    from .views import GroupView, LagView, SharePartitionView

T = TypeVar("T")


class Runner(Protocol):
    """How a control reaches the broker: calls `fn` on the broker's trio thread (or
    directly, inside its run) and returns what it returned."""

    def __call__(self, fn: Callable[[], T], /) -> T: ...


class ClockControl:
    """The broker's clock (`kcsim.clock`): advance it, freeze it, resume it.

    Advancing fires, in order and each at its own time, every deadline that falls
    due in between (session and rebalance time-outs, pending syncs, the initial
    rebalance delay, offset retention, KIP-848 sessions, long-poll fetches), as if
    that time had passed. Clients keep their own clocks."""

    def __init__(self, run: Runner, server: Callable[[], Server]) -> None:
        self._call = run
        self._server = server

    def now_ms(self) -> int:
        """The broker's time, in milliseconds since the epoch."""
        return int(self._call(lambda: self._server().clock.now_ms()))

    def advance(self, ms: int) -> int:
        """Move the time `ms` milliseconds forward at once; returns the new time."""
        def advance() -> int:
            clock = self._server().clock
            clock.advance(ms)
            return clock.now_ms()
        return int(self._call(advance))

    def freeze(self) -> int:
        """Stop the time (it moves only when advanced); returns the time it stands at."""
        def freeze() -> int:
            clock = self._server().clock
            clock.freeze()
            return clock.now_ms()
        return int(self._call(freeze))

    def resume(self) -> int:
        """Let the time run again from where it stands; returns it."""
        def resume() -> int:
            clock = self._server().clock
            clock.resume()
            return clock.now_ms()
        return int(self._call(resume))

    @property
    def frozen(self) -> bool:
        return bool(self._call(lambda: self._server().clock.frozen))


class FaultControl:
    """Fault rules (`kcsim.faults`); see kcsim.server.control.faults for the fields."""

    def __init__(self, run: Runner, server: Callable[[], Server]) -> None:
        self._call = run
        self._server = server

    def add(self, rule: FaultRule | Mapping[str, Any] | None = None, **fields: Any) -> int:
        """Install a rule, e.g. `add(api="OffsetCommit", error="NOT_COORDINATOR", times=2)`;
        returns its id. Bad input raises ValueError naming the field."""
        return int(self._call(lambda: self._server().broker.faults.add(rule, **fields)))

    def get(self, rule_id: int) -> FaultStatus:
        """The rule and how often it matched, fired and holds requests now."""
        return self._call(lambda: self._server().broker.faults.get(rule_id))

    def list(self) -> list[FaultStatus]:
        return self._call(lambda: self._server().broker.faults.list())

    def remove(self, rule_id: int) -> FaultStatus:
        """Uninstall a rule (requests it holds go on); returns its final counts."""
        return self._call(lambda: self._server().broker.faults.remove(rule_id))

    def clear(self) -> None:
        self._call(lambda: self._server().broker.faults.clear())

    def release(self, rule_id: int | None = None) -> int:
        """Let requests held by a rule (or by every rule) go on; returns how many."""
        return int(self._call(lambda: self._server().broker.faults.release(rule_id)))

    def coordinator(self, group: str, state: str) -> int | None:
        """Make `group`'s coordinator "loading" (COORDINATOR_LOAD_IN_PROGRESS),
        "unavailable" (COORDINATOR_NOT_AVAILABLE) or "available" again."""
        return self._call(lambda: self._server().broker.faults.coordinator(group, state))


class Controls:
    """The clock, faults, request log and group views of one broker."""

    def __init__(self, run: Runner, server: Callable[[], Server]) -> None:
        self._call = run
        self._server = server
        self.clock = ClockControl(run, server)
        self.faults = FaultControl(run, server)
        self.acls = AclControl(run, server)
        self.nodes = NodeControl(run, server)  # with brokers=N: stop, start, move leaders

    def requests(self, api: Any = None, *, group: str | None = None,
                 client_id: str | None = None, version: int | None = None, error: Any = None,
                 connection: int | None = None, since: int = 0) -> list[RequestRecord]:
        """Answered requests, oldest first, that match every filter given: API (name or key),
        group, client id, version, an error name in the answer, connection number, and
        `since` (only those with a larger seq)."""
        filters = _filters(api, group, client_id, version, error, connection, since)
        return self._call(lambda: self._server().broker.request_log.query(**filters))

    def bootstrap_of(self, listener: str) -> str:
        """Where clients reach the listener named `listener` (its advertised host:port)."""
        for address in self._server().advertised:
            if address.name == listener.upper():
                host = f"[{address.host}]" if ":" in address.host else address.host
                return f"{host}:{address.port}"
        raise KeyError(f"no listener named {listener}")

    @property
    def ssl_ca_file(self) -> str | None:
        """The CA (PEM) that signed the SSL listeners' certificate, when kcsim made it: what
        clients trust (ssl.ca.location, ssl.truststore.location of type PEM)."""
        return self._server().ssl_ca_file

    def issue_client_cert(self, common_name: str = "client",
                          organization: str | None = None) -> ClientCert:
        """A client certificate signed by kcsim's CA, for mutual TLS: its files and the
        principal the broker will give a client presenting it."""
        tls = self._server().tls
        if tls is None:
            raise RuntimeError("the kcsim server has no SSL listener")
        return tls.issue_client_cert(common_name, organization)

    # -- SASL users -------------------------------------------------------------------

    def _users(self) -> Users:
        server = self._server()
        return Users(server.broker.sasl_plain_users, server.state.scram_credentials,
                     server.record)

    def add_user(self, name: str, password: str, mechanism: str = "SCRAM-SHA-512",
                 iterations: int = 4096) -> None:
        """Make `name` a SASL user of `mechanism` (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)
        with `password`: a SCRAM user is a durable credential record, as
        AlterUserScramCredentials makes it; a PLAIN user lasts until the broker stops."""
        self._call(lambda: self._users().add(name, password, mechanism, iterations))

    def remove_user(self, name: str, mechanism: str | None = None) -> list[str]:
        """Remove `name`'s `mechanism` (None: all it has); returns the mechanisms removed."""
        return self._call(lambda: self._users().remove(name, mechanism))

    def users(self) -> dict[str, list[str]]:
        """Every SASL user, with the mechanisms it may authenticate with."""
        return self._call(lambda: self._users().list())

    def clear_requests(self) -> None:
        self._call(lambda: self._server().broker.request_log.clear())

    def last_request_seq(self) -> int:
        """The seq of the newest logged request: pass it as `since` to see only later ones."""
        return int(self._call(lambda: self._server().broker.request_log.last_seq))

    def group(self, group: str) -> GroupView | None:
        """The group as the coordinator holds it now (None: no such group)."""
        check, _ = group_condition(group, None, None)
        return self._call(lambda: check(self._server())[1])

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        """The group's committed offsets by (topic, partition)."""
        check, _ = committed_condition(group, {})
        return self._call(lambda: check(self._server())[1])

    def groups(self) -> list[GroupView]:
        """Every group the coordinator holds now, classic and KIP-848, by group id."""
        def views() -> list[GroupView]:
            broker = self._server().broker
            found = (group_view(broker.groups, broker.topics.topic_name, g)
                     for g in sorted(broker.groups.groups() if broker.groups else ()))
            return [v for v in found if v is not None]
        return self._call(views)

    def paused(self, group: str) -> dict[str, list[int]]:
        """The group's paused partitions (KIP-1249) by topic."""
        if not isinstance(group, str):
            raise ValueError(f"group: expected a group id, got {group!r}")
        return self._call(lambda: paused_view(self._server().broker.groups, group))

    def lag(self, group: str) -> list[LagView]:
        """The group's lag per partition it committed an offset for: the log end minus the
        committed offset, computed now."""
        if not isinstance(group, str):
            raise ValueError(f"group: expected a group id, got {group!r}")
        return self._call(lambda: lag_view(self._server().broker.groups,
                                           self._server().broker.topics, group))

    def share_partition(self, group: str, topic: str,
                        partition: int = 0) -> SharePartitionView | None:
        """A share group's partition: its start and end offsets and each in-flight record
        (state, delivery count, holder, lock deadline); None while no member fetched it."""
        share_condition(group, topic, partition, None, {})  # refuses bad arguments
        return self._call(lambda: share_partition_view(
            self._server().broker.groups, self._server().broker.topics, group, topic, partition))

    def events(self, group: str | None = None, kind: str | None = None,
               group_type: str | None = None, since: int = 0, *, cause: str | None = None,
               member: str | None = None) -> list[GroupEventValue]:
        """The group events numbered `since` or later, oldest first, that match every
        filter given (kind, cause and group type: words of kcsim.coordinator.shared.events)."""
        wanted, since = event_filter(group, kind, group_type, cause, member), event_seq(since)
        return self._call(lambda: find_events(self._server(), wanted, since))

    def next_event_seq(self) -> int:
        """The number the next event will have: pass it as `since` to see only later ones."""
        return int(self._call(lambda: next_seq(self._server())))

    def pending_offsets(self, group: str) -> dict[tuple[str, int], int]:
        """The group's offsets pending in open transactions by (topic, partition) (the newest
        if several producers have one for a partition)."""
        def read() -> dict[tuple[str, int], int]:
            groups = self._server().broker.groups
            if groups is None:
                return {}
            return {tp: value.offset for offsets in groups.pending_offsets(group).values()
                    for tp, value in offsets.items()}
        return self._call(read)

    def transaction(self, transactional_id: str) -> tuple[int, int, str] | None:
        """(producer id, epoch, state) of a transactional id, as the coordinator holds it."""
        return self._call(
            lambda: self._server().broker.transactions.producer_epochs().get(transactional_id))


def _filters(api: Any, group: str | None, client_id: str | None, version: int | None,
             error: Any, connection: int | None, since: int) -> dict[str, Any]:
    return {"api": api, "group": group, "client_id": client_id, "version": version,
            "error": error, "connection": connection, "since": since}


def _event_condition(group: str | None, kind: str | None, cause: str | None,
                     group_type: str | None, member: str | None, since: int) -> Any:
    return event_condition(event_filter(group, kind, group_type, cause, member),
                           event_seq(since))


class BlockingControls(Controls):
    """Controls of a broker on another thread; the waits block this one."""

    def wait_for_group(self, group: str, state: str | None = "Stable", members: int | None = None,
                       timeout: float = DEFAULT_TIMEOUT_S) -> GroupView | None:
        """Return the group once it is in `state` (case-insensitive; a missing group is
        Dead) with `members` members, whichever are given."""
        check, what = group_condition(group, state, members)
        return wait_blocking(self._call, self._server, check, what, timeout)

    def wait_for_committed(self, group: str, offsets: Mapping[tuple[str, int], int],
                           timeout: float = DEFAULT_TIMEOUT_S) -> dict[tuple[str, int], int]:
        """Return the group's committed offsets once each given (topic, partition) has the
        given offset; `{}` waits until the group has none."""
        check, what = committed_condition(group, offsets)
        return wait_blocking(self._call, self._server, check, what, timeout)

    def wait_for_share_partition(
            self, group: str, topic: str, partition: int = 0, *, start_offset: int | None = None,
            available: int | None = None, acquired: int | None = None,
            acknowledged: int | None = None, archived: int | None = None,
            timeout: float = DEFAULT_TIMEOUT_S) -> SharePartitionView:
        """Return the share partition once its start offset and the number of in-flight
        records in each state are as given (those given; none: once it is fetched)."""
        check, what = share_condition(group, topic, partition, start_offset, {
            "available": available, "acquired": acquired, "acknowledged": acknowledged,
            "archived": archived})
        return wait_blocking(self._call, self._server, check, what, timeout)

    def wait_for_request(self, api: Any = None, *, count: int = 1, group: str | None = None,
                         client_id: str | None = None, version: int | None = None,
                         error: Any = None, connection: int | None = None, since: int = 0,
                         timeout: float = DEFAULT_TIMEOUT_S) -> list[RequestRecord]:
        """Return the matching answered requests (as `requests`) once there are `count`."""
        check, what = request_condition(
            _filters(api, group, client_id, version, error, connection, since), count)
        return wait_blocking(self._call, self._server, check, what, timeout)

    def wait_for_fault(self, rule_id: int, *, fired: int | None = None, held: int | None = None,
                       timeout: float = DEFAULT_TIMEOUT_S) -> FaultStatus:
        """Return the rule's status once it fired `fired` times and/or holds `held` requests
        (neither given: once it fired)."""
        check, what = fault_condition(rule_id, fired, held)
        return wait_blocking(self._call, self._server, check, what, timeout)

    def wait_for_event(self, group: str | None = None, kind: str | None = None,
                       cause: str | None = None, *, group_type: str | None = None,
                       member: str | None = None, since: int = 0,
                       timeout: float = DEFAULT_TIMEOUT_S) -> GroupEventValue:
        """Return the first event numbered `since` or later that matches every filter given,
        as soon as there is one (at once if the history holds one already)."""
        check, what = _event_condition(group, kind, cause, group_type, member, since)
        return wait_blocking(self._call, self._server, check, what, timeout)


    def run_log_maintenance(self, *, roll: bool = False,
                            timeout: float = DEFAULT_TIMEOUT_S) -> MaintenanceReport:
        """Run retention and the log cleaner over every topic now, whatever their timers say
        (Kafka's log.retention.check.interval.ms, the cleaner's dirty ratio); `roll` first
        closes every active segment holding records, so that the cleaner may clean them.
        Returns what they did."""
        done = threading.Event()
        box: dict[str, Any] = {}

        async def run() -> None:
            try:
                box["report"] = await self._server().maintenance.run_now(roll=roll)
            except Exception as exc:  # handed to the caller's thread
                box["error"] = exc
            finally:
                done.set()

        self._call(lambda: trio.lowlevel.spawn_system_task(run))
        if not done.wait(timeout):
            raise WaitTimeout(f"log maintenance did not finish in {timeout:g} s")
        if "error" in box:
            raise box["error"]
        report: MaintenanceReport = box["report"]
        return report


class TrioControls(Controls):
    """Controls of a broker inside the caller's own trio run; the waits are awaited."""

    def __init__(self, server: Callable[[], Server]) -> None:
        super().__init__(_direct, server)

    async def wait_for_group(self, group: str, state: str | None = "Stable",
                             members: int | None = None,
                             timeout: float = DEFAULT_TIMEOUT_S) -> GroupView | None:
        check, what = group_condition(group, state, members)
        return await wait_trio(self._server, check, what, timeout)

    async def wait_for_committed(self, group: str, offsets: Mapping[tuple[str, int], int],
                                 timeout: float = DEFAULT_TIMEOUT_S) -> dict[tuple[str, int], int]:
        check, what = committed_condition(group, offsets)
        return await wait_trio(self._server, check, what, timeout)

    async def wait_for_share_partition(
            self, group: str, topic: str, partition: int = 0, *, start_offset: int | None = None,
            available: int | None = None, acquired: int | None = None,
            acknowledged: int | None = None, archived: int | None = None,
            timeout: float = DEFAULT_TIMEOUT_S) -> SharePartitionView:
        check, what = share_condition(group, topic, partition, start_offset, {
            "available": available, "acquired": acquired, "acknowledged": acknowledged,
            "archived": archived})
        return await wait_trio(self._server, check, what, timeout)

    async def wait_for_request(self, api: Any = None, *, count: int = 1, group: str | None = None,
                               client_id: str | None = None, version: int | None = None,
                               error: Any = None, connection: int | None = None, since: int = 0,
                               timeout: float = DEFAULT_TIMEOUT_S) -> list[RequestRecord]:
        check, what = request_condition(
            _filters(api, group, client_id, version, error, connection, since), count)
        return await wait_trio(self._server, check, what, timeout)

    async def wait_for_fault(self, rule_id: int, *, fired: int | None = None,
                             held: int | None = None,
                             timeout: float = DEFAULT_TIMEOUT_S) -> FaultStatus:
        check, what = fault_condition(rule_id, fired, held)
        return await wait_trio(self._server, check, what, timeout)

    async def wait_for_event(self, group: str | None = None, kind: str | None = None,
                             cause: str | None = None, *, group_type: str | None = None,
                             member: str | None = None, since: int = 0,
                             timeout: float = DEFAULT_TIMEOUT_S) -> GroupEventValue:
        check, what = _event_condition(group, kind, cause, group_type, member, since)
        return await wait_trio(self._server, check, what, timeout)


    async def run_log_maintenance(self, *, roll: bool = False) -> MaintenanceReport:
        return await self._server().maintenance.run_now(roll=roll)

    def event_feed(self, group: str | None = None, kind: str | None = None,
                   group_type: str | None = None, since: int = 0, *,
                   type_field: str = "group_type") -> EventFeed:
        """The matching events numbered `since` or later, then each new one as it folds in,
        in a bounded buffer (events.EventFeed); close it when done."""
        wanted = event_filter(group, kind, group_type, type_field=type_field)
        return EventFeed(history_of(self._server()), wanted, event_seq(since))


def _direct(fn: Callable[[], T]) -> T:
    return fn()
