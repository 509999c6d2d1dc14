"""Every declared message agrees with Apache Kafka's own JSON definitions.

The declarations in protocol/apis/ are written by hand in our DSL; this checks
them, version by version, against the reference specs in
<repo>/../shared/kafka-message-specs, so a slip in a version range, a tag or a
default cannot silently change what goes on the wire. For each version we
accept, the newest release that still lists it is the authority (4.3 dropped
some old versions that 3.9 still describes).
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kcsim.protocol.apis import APIS, DATA
from kcsim.protocol.schema import _MISSING, Api, ArrayType, Field, Message, StructType, Versions

SPECS = Path(__file__).resolve().parents[2].parent / "shared" / "kafka-message-specs"
RELEASES = ("3.9", "4.3", "4.4")  # oldest first
# APIs whose newest release kcsim does not serve yet: checked against the releases up to this.
UNTIL: dict[str, str] = {}  # none now: TxnOffsetCommit v6 (KIP-1319) is served
# Coordinator records checked against Kafka 4.4's record schemas (by name prefix).
CHECKED_RECORDS = ("StreamsGroup",)
PINNED = {0: Versions(3, 13), 1: Versions(4, 18)}  # Produce, Fetch: not the full union

KAFKA_PRIMITIVES = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
     "string", "bytes", "records", "uuid"}
)
INTEGERS = frozenset({"int8", "int16", "uint16", "int32", "uint32", "int64"})
IMPLICIT_DEFAULTS = {"bool": False, "string": "", "bytes": b"", "float64": 0.0}

pytestmark = pytest.mark.skipif(
    not SPECS.is_dir(), reason=f"reference specs not found at {SPECS}"
)


# -- reading the reference ------------------------------------------------------


def strip_comments(text: str) -> str:
    """Drop // comments (Kafka's JSON has them) without touching string contents."""
    out: list[str] = []
    i, in_string = 0, False
    while i < len(text):
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class Reference:
    release: str
    spec: dict[str, Any]

    @property
    def valid(self) -> Versions:
        return Versions.parse(self.spec["validVersions"])

    @property
    def flexible(self) -> Versions:
        return Versions.parse(self.spec.get("flexibleVersions", "none"))


def references(name: str) -> list[Reference]:
    """The releases that define `name` (up to UNTIL's for an API whose newest versions
    kcsim does not serve yet)."""
    refs = []
    until = UNTIL.get(name.removesuffix("Request").removesuffix("Response"), RELEASES[-1])
    for release in RELEASES[:RELEASES.index(until) + 1]:
        path = SPECS / release / f"{name}.json"
        if path.exists():
            refs.append(Reference(release, json.loads(strip_comments(path.read_text()))))
    records = SPECS / "4.4-records" / f"{name}.json"  # the coordinators' record schemas
    if not refs and name.startswith(CHECKED_RECORDS) and records.exists():
        refs.append(Reference("4.4", json.loads(strip_comments(records.read_text()))))
    return refs


def authority(refs: list[Reference], version: int) -> Reference | None:
    """The newest release that lists `version`."""
    for ref in reversed(refs):
        if version in ref.valid:
            return ref
    return None


def expected_range(msg: Message, refs: list[Reference]) -> Versions:
    """The union of the releases' ranges, except where kcsim pins a narrower one."""
    if msg.api_key in PINNED and msg.kind != "data":
        return PINNED[msg.api_key]
    return Versions(min(r.valid.lo for r in refs), max(r.valid.hi or 0 for r in refs))


# -- one version's view of a message, from either side -----------------------------


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def key(name: str) -> str:
    """Match fields across naming styles; the exact spelling is checked separately."""
    return name.replace("_", "").lower()


@dataclass(frozen=True)
class Node:
    """A field as it is on the wire in one version."""

    shown: str  # dotted path with Kafka-style names, for messages
    name: str
    type: str
    nullable: bool
    tagged: bool
    tag: int | None
    default: Any  # _MISSING when none is given
    versions: str
    nullable_versions: str
    tagged_versions: str


View = tuple[dict[tuple[str, ...], Node], dict[tuple[str, ...], list[str]]]


def kafka_default(kafka_type: str, raw: Any) -> Any:
    text = raw if isinstance(raw, str) else json.dumps(raw)  # some specs give bare numbers
    if text == "null":
        return None
    if kafka_type in INTEGERS:
        return int(text, 0)
    if kafka_type == "bool":
        return {"true": True, "false": False}[text]
    if kafka_type == "float64":
        return float(text)
    return text


def kafka_view(ref: Reference, version: int) -> View:
    common = {c["name"]: c["fields"] for c in ref.spec.get("commonStructs", ())}
    nodes: dict[tuple[str, ...], Node] = {}
    order: dict[tuple[str, ...], list[str]] = {}

    def walk(fields: list[dict[str, Any]], prefix: tuple[str, ...], shown: str) -> None:
        seq = []
        for fd in fields:
            # A tagged field may name only its tagged versions (StreamsGroupMetadataValue's).
            fd = {"versions": fd.get("taggedVersions"), **fd}
            if version not in Versions.parse(fd["versions"]):
                continue
            path = prefix + (key(fd["name"]),)
            nullable = Versions.parse(fd.get("nullableVersions"))
            tagged = Versions.parse(fd.get("taggedVersions"))
            node = Node(
                shown=f"{shown}{fd['name']}",
                name=fd["name"],
                type=fd["type"],
                nullable=version in nullable,
                tagged=version in tagged,
                tag=fd.get("tag"),
                default=kafka_default(fd["type"], fd["default"]) if "default" in fd else _MISSING,
                versions=fd["versions"],
                nullable_versions=str(nullable),
                tagged_versions=str(tagged),
            )
            nodes[path] = node
            if not node.tagged:
                seq.append(path[-1])
            base = fd["type"].removeprefix("[]")
            if base not in KAFKA_PRIMITIVES:
                walk(fd.get("fields") or common.get(base, []), path, node.shown + ".")
        order[prefix] = seq

    walk(ref.spec["fields"], (), "")
    return nodes, order


def type_name(t: Any) -> str:
    if isinstance(t, ArrayType):
        return "[]" + type_name(t.item)
    if isinstance(t, StructType):
        return t.name
    return str(t)


def our_view(msg: Message, version: int) -> View:
    nodes: dict[tuple[str, ...], Node] = {}
    order: dict[tuple[str, ...], list[str]] = {}

    def walk(fields: tuple[Field, ...], prefix: tuple[str, ...], shown: str) -> None:
        seq = []
        for fld in fields:
            if version not in fld.versions:
                continue
            path = prefix + (key(fld.name),)
            node = Node(
                shown=f"{shown}{fld.name}",
                name=fld.name,
                type=type_name(fld.type),
                nullable=version in fld.nullable,
                tagged=version in fld.tagged,
                tag=fld.tag,
                default=fld.default,
                versions=str(fld.versions),
                nullable_versions=str(fld.nullable),
                tagged_versions=str(fld.tagged),
            )
            nodes[path] = node
            if not node.tagged:
                seq.append(path[-1])
            inner = fld.type.item if isinstance(fld.type, ArrayType) else fld.type
            if isinstance(inner, StructType):
                walk(inner.fields, path, node.shown + ".")
        order[prefix] = seq

    walk(msg.fields, (), "")
    return nodes, order


# -- comparing -------------------------------------------------------------------


def name_ok(ours: str, kafka: str) -> bool:
    """Kafka's name in snake_case; around digits (Enable2Pc) either split is fine."""
    if ours == snake(kafka):
        return True
    return any(c.isdigit() for c in kafka) and key(ours) == key(kafka) and ours == ours.lower()


def same_default(ours: Node, theirs: Node) -> bool:
    if theirs.default is _MISSING:
        if ours.default is _MISSING:
            return True
        implicit = 0 if theirs.type in INTEGERS else IMPLICIT_DEFAULTS.get(theirs.type, _MISSING)
        return implicit is not _MISSING and _equal(ours.default, implicit)
    return ours.default is not _MISSING and _equal(ours.default, theirs.default)


def _equal(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def compare_fields(
    ours: View, theirs: View, version: int, release: str, problems: dict[str, list[int]]
) -> None:
    def note(text: str) -> None:
        problems.setdefault(text, []).append(version)

    our_nodes, our_order = ours
    kafka_nodes, kafka_order = theirs
    for path, k in kafka_nodes.items():
        o = our_nodes.get(path)
        if o is None:
            if path[:-1] == () or path[:-1] in our_nodes:
                note(f"{k.shown}: missing (Kafka {release}: versions {k.versions})")
            continue
        where = f"{k.shown} (ours: {o.shown})"
        if not name_ok(o.name, k.name):
            note(f"{where}: attribute should be named {snake(k.name)!r}")
        if o.type != k.type:
            note(f"{where}: type {o.type!r}, Kafka {release} says {k.type!r}")
        if o.nullable != k.nullable:
            note(
                f"{where}: nullable={o.nullable} (nullable={o.nullable_versions!r}), "
                f"Kafka {release} nullableVersions {k.nullable_versions!r}"
            )
        if o.tagged != k.tagged:
            note(
                f"{where}: tagged={o.tagged} (tagged={o.tagged_versions!r}), "
                f"Kafka {release} taggedVersions {k.tagged_versions!r}"
            )
        elif k.tagged and o.tag != k.tag:
            note(f"{where}: tag={o.tag}, Kafka {release} says tag {k.tag}")
        if not same_default(o, k):
            ours_d = "none" if o.default is _MISSING else repr(o.default)
            kafka_d = "none" if k.default is _MISSING else repr(k.default)
            note(f"{where}: default {ours_d}, Kafka {release} default {kafka_d}")
    for path, o in our_nodes.items():
        if path not in kafka_nodes and (path[:-1] == () or path[:-1] in kafka_nodes):
            note(f"{o.shown}: declared (versions={o.versions!r}) but absent in Kafka {release}")
    for path, seq in kafka_order.items():
        mine = our_order.get(path)
        if mine is not None and set(mine) == set(seq) and mine != seq:
            shown = kafka_nodes[path].shown if path else "<top level>"
            note(f"{shown}: wire order {mine}, Kafka {release} order {seq}")


def spans(versions: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2, 5'."""
    runs: list[list[int]] = []
    for v in sorted(set(versions)):
        if runs and runs[-1][1] == v - 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def conformance_problems(msg: Message, refs: list[Reference]) -> list[str]:
    problems: dict[str, list[int]] = {}
    newest = refs[-1].spec
    # A coordinator record is data to kcsim; its type id is kafka_format's business.
    record = msg.kind == "data" and str(newest.get("type")).startswith("coordinator-")
    if newest.get("type") != msg.kind and not record:
        problems[f"kind {msg.kind!r}, Kafka says {newest.get('type')!r}"] = []
    if newest.get("apiKey") != msg.api_key and not record:
        problems[f"api key {msg.api_key}, Kafka says {newest.get('apiKey')}"] = []
    if msg.valid.hi is None:
        problems[f"valid versions {msg.valid} must be closed (no '+')"] = []
        return list(problems)
    want = expected_range(msg, refs)
    if len(refs) == len(RELEASES) or msg.api_key in PINNED:
        if msg.valid != want:
            problems[f"valid versions {msg.valid}, expected {want}"] = []
    elif not (msg.valid.lo <= want.lo and msg.valid.hi >= (want.hi or 0)):
        # A release lacks this message: its newer versions cannot be checked here.
        problems[f"valid versions {msg.valid} do not cover the referenced {want}"] = []
    unchecked = []
    for version in range(msg.valid.lo, msg.valid.hi + 1):
        ref = authority(refs, version)
        if ref is None:
            if len(refs) == len(RELEASES):
                problems.setdefault("no Kafka release lists these versions", []).append(version)
            else:
                unchecked.append(version)
            continue
        if (version in msg.flexible) != (version in ref.flexible):
            problems.setdefault(
                f"flexible versions {msg.flexible}, Kafka {ref.release} says {ref.flexible}", []
            ).append(version)
        compare_fields(our_view(msg, version), kafka_view(ref, version), version,
                       ref.release, problems)
    if unchecked:
        missing = [r for r in RELEASES if r not in {ref.release for ref in refs}]
        warnings.warn(
            f"{msg.name}: versions {spans(unchecked)} unchecked, no reference JSON in "
            f"{', '.join(missing)}",
            stacklevel=2,
        )
    return [f"{text} [versions {spans(vs)}]" if vs else text for text, vs in problems.items()]


# -- tests -----------------------------------------------------------------------


API_LIST = sorted(APIS.values(), key=lambda a: a.key)


def _messages() -> list[Any]:
    out = []
    for api in API_LIST:
        out.append(pytest.param(api.request, id=f"{api.name}-request"))
        out.append(pytest.param(api.response, id=f"{api.name}-response"))
    for name in sorted(DATA):
        out.append(pytest.param(DATA[name], id=name))
    return out


@pytest.mark.parametrize("msg", _messages())
def test_matches_kafka_definition(msg: Message) -> None:
    refs = references(msg.name)
    if not refs:
        pytest.skip(f"no reference JSON for {msg.name} in {SPECS}")
    problems = conformance_problems(msg, refs)
    assert not problems, f"{msg.name} differs from Kafka:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("api", API_LIST, ids=[a.name for a in API_LIST])
def test_api_pairs_request_and_response(api: Api) -> None:
    assert api.request.kind == "request" and api.response.kind == "response", api.name
    assert api.request.api_key == api.key == api.response.api_key, (
        f"{api.name}: Api key {api.key}, request {api.request.api_key}, "
        f"response {api.response.api_key}"
    )
    assert api.request.valid == api.response.valid, (
        f"{api.name}: request versions {api.request.valid}, response {api.response.valid}"
    )
