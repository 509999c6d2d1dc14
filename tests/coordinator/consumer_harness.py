"""A fake clock, topics and KIP-848 clients for driving consumer groups and pauses in unit tests."""

from __future__ import annotations

import itertools
import uuid
from typing import Any

from kcsim.coordinator import Caller, GroupConfig, GroupCoordinator
from kcsim.protocol.codecs import codec, request_class

HeartbeatRequest = request_class(68)
DescribeRequest = request_class(69)
PauseRequest = request_class(1000)
ResumeRequest = request_class(1001)
ListPausedRequest = request_class(1002)
OffsetCommitRequest = request_class(8)
OffsetFetchRequest = request_class(9)
ListGroupsRequest = request_class(16)
DescribeGroupsRequest = request_class(15)
DeleteGroupsRequest = request_class(42)
OffsetDeleteRequest = request_class(47)
JoinGroupRequest = request_class(11)


class Topics:
    """Topic metadata that tests can change (create, delete, add partitions)."""

    def __init__(self, partitions: dict[str, int]) -> None:
        self.partitions: dict[str, int] = {}
        self.ids: dict[str, uuid.UUID] = {}
        self.names: dict[uuid.UUID, str] = {}
        self._generation = itertools.count()
        for name, count in partitions.items():
            self.create(name, count)

    def create(self, name: str, count: int) -> uuid.UUID:
        topic_id = uuid.uuid5(uuid.NAMESPACE_URL, f"{name}#{next(self._generation)}")
        self.partitions[name] = count
        self.ids[name] = topic_id
        self.names[topic_id] = name
        return topic_id

    def delete(self, name: str) -> uuid.UUID:
        topic_id = self.ids.pop(name)
        del self.partitions[name]
        del self.names[topic_id]
        return topic_id

    def partition_count(self, name: str) -> int | None:
        return self.partitions.get(name)

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return self.names.get(topic_id)

    def topic_id(self, name: str) -> uuid.UUID | None:
        return self.ids.get(name)

    def topic_names(self) -> list[str]:
        return list(self.partitions)


class Token:
    __slots__ = ("api_key", "n", "version")

    def __init__(self, n: int, api_key: int, version: int) -> None:
        self.n = n
        self.api_key = api_key
        self.version = version


def config(**overrides: Any) -> GroupConfig:
    """Settings for a test. These tests step the KIP-848 protocol a heartbeat at a time with
    no time passing, so they assign in the heartbeat that changes the group (assignment
    interval 0, as the oracle runs Kafka) unless they say otherwise; the interval has its
    own tests (test_assignment_interval.py)."""
    return GroupConfig(**{"consumer_group_assignment_interval_ms": 0, **overrides})


class Harness:
    """One coordinator, a fake clock and every record it wrote."""

    def __init__(self, cfg: GroupConfig | None = None, topics: dict[str, int] | None = None,
                 now: int = 1_000) -> None:
        self.config = cfg or config()
        self.topics = Topics(topics if topics is not None else {"t": 6, "u": 3})
        self._ids = itertools.count(1)
        self.gc = self._coordinator()
        self.now = now
        self.records: list[Any] = []
        self._tokens = itertools.count(1)

    def _coordinator(self) -> GroupCoordinator:
        return GroupCoordinator(self.config, self.topics,
                                new_uuid=lambda: uuid.UUID(int=next(self._ids)))

    def _collect(self, outcome: Any) -> list[tuple[Token, Any]]:
        self.records.extend(outcome.records)
        for token, response in outcome.responses:
            codec(token.api_key, "response").encode(response, token.version)
        return outcome.responses

    def call(self, api_key: int, version: int, request: Any, client_id: str = "client",
             host: str = "127.0.0.1") -> Any:
        token = Token(next(self._tokens), api_key, version)
        ctx = Caller(token=token, client_id=client_id, client_host=host)
        responses = self._collect(self.gc.handle(api_key, version, request, ctx, self.now))
        mine = [r for t, r in responses if t is token]
        assert len(mine) == 1, f"request {api_key} v{version} was not answered at once"
        return mine[0]

    def advance(self, ms: int) -> None:
        self.now += ms
        self._collect(self.gc.tick(self.now))

    def replayed(self) -> GroupCoordinator:
        """A fresh coordinator rebuilt from every record written so far."""
        fresh = self._coordinator()
        for record in self.records:
            fresh.apply(record)
        return fresh

    def restart(self) -> None:
        """Replace the coordinator by one rebuilt from the log, as a process restart does."""
        self.gc = self.replayed()

    # -- requests -------------------------------------------------------------

    def heartbeat(self, group: str, member_id: str = "", epoch: int = 0, *, version: int = 1,
                  instance: str | None = None, rack: str | None = None,
                  rebalance: int = 30_000, names: list[str] | None = None,
                  regex: str | None = None, assignor: str | None = None,
                  owned: dict[uuid.UUID, list[int]] | None = None, full: bool | None = None,
                  client_id: str = "client") -> Any:
        cls = HeartbeatRequest
        joining = epoch == 0
        if full is None:
            full = joining
        tps = None
        if owned is not None or joining:
            tps = [cls.TopicPartitions(topic_id=t, partitions=sorted(ps))
                   for t, ps in (owned or {}).items()]
        request = cls(
            group_id=group, member_id=member_id, member_epoch=epoch, instance_id=instance,
            rack_id=rack, rebalance_timeout_ms=rebalance if full else -1,
            subscribed_topic_names=names if (full or names is not None) else None,
            subscribed_topic_regex=regex, server_assignor=assignor, topic_partitions=tps,
        )
        return self.call(68, version, request, client_id=client_id)

    def describe(self, *groups: str, version: int = 1) -> Any:
        return self.call(69, version, DescribeRequest(group_ids=list(groups),
                                                      include_authorized_operations=True))

    def _change(self, api_key: int, group: str, partitions: dict[str, list[int]]) -> Any:
        cls = request_class(api_key)
        name = cls.__name__.removesuffix("Request")
        topic_cls = getattr(cls, f"{name}RequestTopic")
        part_cls = getattr(cls, f"{name}RequestPartition")
        return self.call(api_key, 0, cls(group_id=group, topics=[
            topic_cls(name=t, partitions=[part_cls(partition_index=p) for p in ps])
            for t, ps in partitions.items()]))

    def pause(self, group: str, partitions: dict[str, list[int]]) -> Any:
        return self._change(1000, group, partitions)

    def resume(self, group: str, partitions: dict[str, list[int]]) -> Any:
        return self._change(1001, group, partitions)

    def list_paused(self, group: str) -> Any:
        return self.call(1002, 0, ListPausedRequest(group_id=group))

    def commit(self, group: str, offsets: dict[tuple[str, int], int], *, epoch: int = -1,
               member_id: str = "", version: int = 9) -> dict[tuple[str, int], int]:
        cls = OffsetCommitRequest
        by_topic: dict[str, list[Any]] = {}
        for (topic, p), offset in offsets.items():
            by_topic.setdefault(topic, []).append(cls.OffsetCommitRequestPartition(
                partition_index=p, committed_offset=offset, committed_leader_epoch=-1,
                commit_timestamp=-1, committed_metadata=""))
        response = self.call(8, version, cls(
            group_id=group, generation_id_or_member_epoch=epoch, member_id=member_id,
            group_instance_id=None, retention_time_ms=-1,
            topics=[cls.OffsetCommitRequestTopic(name=t, partitions=ps)
                    for t, ps in by_topic.items()]))
        return {(t.name, p.partition_index): p.error_code
                for t in response.topics for p in t.partitions}

    def fetch(self, group: str, *, member_id: str | None = None, epoch: int = -1,
              version: int = 9) -> tuple[int, dict[tuple[str, int], int]]:
        cls = OffsetFetchRequest
        response = self.call(9, version, cls(groups=[cls.OffsetFetchRequestGroup(
            group_id=group, member_id=member_id, member_epoch=epoch, topics=None)]))
        [g] = response.groups
        return g.error_code, {(t.name, p.partition_index): p.committed_offset
                              for t in g.topics for p in t.partitions}

    def list_groups(self, *, states: list[str] | None = None,
                    types: list[str] | None = None) -> list[tuple[str, str, str, str]]:
        response = self.call(16, 5, ListGroupsRequest(states_filter=states or [],
                                                      types_filter=types or []))
        return sorted((g.group_id, g.protocol_type, g.group_state, g.group_type)
                      for g in response.groups)

    def describe_classic(self, *groups: str, version: int = 5) -> Any:
        return self.call(15, version, DescribeGroupsRequest(groups=list(groups),
                                                            include_authorized_operations=False))

    def delete_groups(self, *groups: str) -> dict[str, int]:
        response = self.call(42, 2, DeleteGroupsRequest(groups_names=list(groups)))
        return {r.group_id: r.error_code for r in response.results}


class Client:
    """A KIP-848 consumer as the Java client behaves: it gives up revoked partitions at
    once and reports what it owns in every heartbeat (or, `slow`, keeps owning them)."""

    def __init__(self, h: Harness, group: str, names: list[str] | None = None, *,
                 member_id: str | None = None, instance: str | None = None,
                 regex: str | None = None, assignor: str | None = None,
                 version: int = 1) -> None:
        self.h = h
        self.group = group
        self.names = names if names is not None else (["t"] if regex is None else None)
        self.regex = regex
        self.assignor = assignor
        self.instance = instance
        self.version = version
        self.member_id = member_id if member_id is not None else (
            f"m-{uuid.uuid4().hex[:8]}" if version >= 1 else "")
        self.epoch = 0
        self.assigned: dict[uuid.UUID, set[int]] = {}  # the last assignment it was given
        self.owned: dict[uuid.UUID, set[int]] = {}  # what it reports (and consumes)
        self.last: Any = None

    def join(self) -> Any:
        self.epoch = 0
        self.owned = {}
        self.assigned = {}
        return self._send(full=True)

    def subscribe(self, names: list[str] | None = None, regex: str | None = None) -> Any:
        """Change the subscription with the next heartbeat (what subscribe() does in a client)."""
        self.names, self.regex = names, regex
        r = self.h.heartbeat(self.group, self.member_id, self.epoch, version=self.version,
                             instance=self.instance, names=names if names is not None else [],
                             regex=regex, owned={t: sorted(ps) for t, ps in self.assigned.items()},
                             full=False)
        self.last = r
        if r.error_code == 0:
            self.epoch = r.member_epoch
            if r.assignment is not None:
                self.assigned = {tp.topic_id: set(tp.partitions)
                                 for tp in r.assignment.topic_partitions if tp.partitions}
        return r

    def beat(self, *, ack: bool = True) -> Any:
        """A heartbeat; with ack=False the client still reports partitions it was told to drop."""
        return self._send(full=False, keep=not ack)

    def _send(self, full: bool, keep: bool = False) -> Any:
        if not keep:
            self.owned = {t: set(ps) for t, ps in self.assigned.items()}
        r = self.h.heartbeat(
            self.group, self.member_id, self.epoch, version=self.version,
            instance=self.instance, names=self.names if full else None,
            regex=self.regex if full else None, assignor=self.assignor,
            owned={t: sorted(ps) for t, ps in self.owned.items()}, full=full)
        self.last = r
        if r.error_code == 0:
            self.member_id = r.member_id
            self.epoch = r.member_epoch
            if r.assignment is not None:
                self.assigned = {tp.topic_id: set(tp.partitions)
                                 for tp in r.assignment.topic_partitions if tp.partitions}
                owned = {t: set(ps) for t, ps in self.assigned.items()}
                if keep:
                    for t, ps in self.owned.items():
                        owned.setdefault(t, set()).update(ps)
                self.owned = owned
        return r

    def leave(self, epoch: int = -1) -> Any:
        return self.h.heartbeat(self.group, self.member_id, epoch, version=self.version,
                                instance=self.instance, full=False)

    def partitions(self) -> set[tuple[str, int]]:
        return {(self.h.topics.topic_name(t) or "?", p) for t, ps in self.owned.items() for p in ps}


def settle(clients: list[Client], rounds: int = 20) -> None:
    """Heartbeat every client until the group is Stable (fails if it never is)."""
    h = clients[0].h
    group = clients[0].group
    for _ in range(rounds):
        for c in clients:
            r = c.beat()
            assert r.error_code == 0, (c.member_id, r)
        if h.gc.group_state(group) == "Stable":
            return
    raise AssertionError(f"group {group} did not become Stable: {h.gc.group_state(group)}")


def ownership(h: Harness, group: str) -> dict[tuple[str, int], str]:
    """Who the coordinator says holds each partition (assigned or pending revocation)."""
    g = h.gc.consumer_group(group)
    out = {}
    for m in g.members.values():
        for assignment in (m.assigned, m.pending_revocation):
            for t, ps in assignment.items():
                for p in ps:
                    key = (h.topics.topic_name(t) or "?", p)
                    assert key not in out, f"{key} owned by {out[key]} and {m.member_id}"
                    out[key] = m.member_id
    return out
