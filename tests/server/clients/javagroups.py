"""The Java client (kafka-clients 3.9 or 4.x) behind the surface the group scenarios use.

One JVM runs `GroupDriver` (tests/integration/java/GroupDriver.java): it reads one
command per line on stdin and answers one JSON object per line on stdout. Its
consumers poll on their own threads inside the JVM; admin calls go through one Admin.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from typing import TYPE_CHECKING, Any

from . import javaclient
from .groupkit import SESSION_MS, WAIT_S, Described, DescribedMember, MemberView, Offsets

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

# The Java exceptions group admin calls fail with, as Kafka's error names.
JAVA_ERRORS = {
    "GroupNotEmptyException": "NON_EMPTY_GROUP",
    "GroupIdNotFoundException": "GROUP_ID_NOT_FOUND",
    "UnknownMemberIdException": "UNKNOWN_MEMBER_ID",
    "GroupSubscribedToTopicException": "GROUP_SUBSCRIBED_TO_TOPIC",
    "IllegalGenerationException": "ILLEGAL_GENERATION",
    "RebalanceInProgressException": "REBALANCE_IN_PROGRESS",
    "CoordinatorNotAvailableException": "COORDINATOR_NOT_AVAILABLE",
    "UnknownTopicOrPartitionException": "UNKNOWN_TOPIC_OR_PARTITION",
}


def _error(name: str | None) -> str | None:
    return None if name is None else JAVA_ERRORS.get(name, name)


class JavaCallFailed(AssertionError):
    pass


class JavaMember:
    def __init__(self, client: JavaGroupClient, name: str, topic: str) -> None:
        self.client, self.name, self.topic = client, name, topic

    def view(self) -> MemberView:
        s = self.client.call("state", self.name)
        return MemberView(s["assignment"], [tuple(r) for r in s["records"]], s["assigned_events"],
                          s["member_id"], s["generation"], s["error"])

    def commit(self, offsets: dict[int, tuple[int, str]] | None = None) -> None:
        words = [f"{p}:{o}:{m}" for p, (o, m) in (offsets or {}).items()]
        self.client.call("commit", self.name, *words)

    def committed(self, partitions: Iterable[int]) -> dict[int, tuple[int, str] | None]:
        found = self.client.call("committed", self.name, self.topic, *map(str, partitions))
        return {int(key.rsplit(":", 1)[1]): None if v is None else (v["offset"], v["metadata"])
                for key, v in found["offsets"].items()}

    def close(self) -> None:
        closed = self.client.call("close", self.name)
        assert closed["error"] is None, f"Java consumer {self.name} failed: {closed['error']}"


class JavaGroupClient:
    name = "java"
    default_assignor = "range"  # first of RangeAssignor, CooperativeStickyAssignor
    lists_states = True
    describes_instance_ids = True
    can_list_many_offsets = True
    can_alter_offsets = True
    can_delete_offsets = True
    can_delete_groups = True
    can_remove_members = True
    committed_has_metadata = True

    def __init__(self, bootstrap: str, log_path: Path,
                 version: str = javaclient.WHEEL_CLIENT) -> None:
        javaclient.skip_without_java()
        self.log_path = log_path
        # kafka-clients 4.x describes with ConsumerGroupDescribe or DescribeGroups v6 (KIP-1043),
        # whose answer for an unknown group is GROUP_ID_NOT_FOUND rather than a Dead group.
        self.describes_unknown_as_dead = version.startswith("3.")
        self._log = open(log_path, "w")  # noqa: SIM115 - open for the life of the driver
        cmd = ["java", "-Xshare:auto", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-cp", javaclient.classpath(version), "GroupDriver", bootstrap]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, text=True, bufsize=1)
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self._lock = threading.Lock()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def stderr(self) -> str:
        try:
            return self.log_path.read_text()[-6000:]
        except OSError:
            return ""

    def call(self, *words: str, timeout: float = WAIT_S + 20) -> dict[str, Any]:
        """Run one driver command; a failed call raises JavaCallFailed with Kafka's error name."""
        assert self.proc.stdin is not None
        with self._lock:
            self.proc.stdin.write(" ".join(words) + "\n")
            self.proc.stdin.flush()
            try:
                line = self._lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"Java driver gave no answer to {words} in {timeout:.0f}s;"
                                     f" stderr:\n{self.stderr()}") from None
        if line is None:
            raise AssertionError(f"Java driver exited ({self.proc.poll()}) during {words};"
                                 f" stderr:\n{self.stderr()}")
        answer = json.loads(line)
        if not answer.pop("ok"):
            raise JavaCallFailed(f"{words[0]} failed: {_error(answer['error'])}: "
                                 f"{answer['message']} ({answer['trace']})")
        return answer

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                assert self.proc.stdin is not None
                self.proc.stdin.write("exit\n")
                self.proc.stdin.flush()
                self.proc.wait(30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            self._log.close()

    # -- consumers ------------------------------------------------------------------

    def consumer(self, group: str, topic: str, name: str, instance_id: str | None = None,
                 session_ms: int = SESSION_MS, assignor: str | None = None) -> JavaMember:
        self.call("consumer", name, group, topic, instance_id or "-", str(session_ms),
                  assignor or "-")
        return JavaMember(self, name, topic)

    # -- admin ----------------------------------------------------------------------

    def list_groups(self, states: list[str] | None = None) -> dict[str, str | None]:
        return self.call("list-groups", *(states or []))["groups"]

    def describe(self, group: str) -> Described:
        d = self.call("describe", group)
        members = [DescribedMember(m["member_id"], m["instance_id"], m["client_id"],
                                   [(t, p) for t, p in m["assignment"]])
                   for m in d["members"]]
        return Described(d["state"], members, d["assignor"] or None)

    @staticmethod
    def _offsets(found: dict[str, Any]) -> Offsets:
        out: Offsets = {}
        for key, v in found.items():
            topic, partition = key.rsplit(":", 1)
            out[(topic, int(partition))] = (v["offset"], v["metadata"])
        return out

    def offsets(self, group: str) -> Offsets:
        return self._offsets(self.call("offsets", group)["groups"][group])

    def offsets_many(self, groups: list[str]) -> dict[str, Offsets]:
        found = self.call("offsets", *groups)["groups"]
        return {g: self._offsets(v) for g, v in found.items()}

    def alter_offsets(self, group: str, topic: str, offsets: dict[int, int]) -> dict[int, str | None]:
        result = self.call("alter", group, topic, *(f"{p}:{o}" for p, o in offsets.items()))
        return {int(p): _error(e) for p, e in result["partitions"].items()}

    def delete_offsets(self, group: str, topic: str, partitions: list[int]) -> dict[int, str | None]:
        result = self.call("delete-offsets", group, topic, *map(str, partitions))
        return {int(p): _error(e) for p, e in result["partitions"].items()}

    def delete_groups(self, groups: list[str]) -> dict[str, str | None]:
        return {g: _error(e) for g, e in self.call("delete-groups", *groups)["groups"].items()}

    def remove_members(self, group: str, instance_ids: list[str]) -> dict[str, str | None]:
        result = self.call("remove-members", group, *instance_ids)
        return {i: _error(e) for i, e in result["members"].items()}
