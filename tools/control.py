"""`kcsim control`: steer a broker serving the HTTP control API from a shell.

Each subcommand is one call of the API (docs/control-http.md), whose JSON answer it
prints. A refusal (bad input, no such rule, a wait that timed out) prints the
API's message on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from .control_client import DEFAULT_HTTP_TIMEOUT_S, ControlClient, ControlError

if TYPE_CHECKING:
    from collections.abc import Callable

URL_ENV = "KCSIM_CONTROL_URL"
FAILED = 1

# `faults add` flags: (flag, body field, type, help)
_RULE_FLAGS: tuple[tuple[str, str, Any, str], ...] = (
    ("--version", "version", int, "only this API version"),
    ("--client-id", "client_id", str, "only requests of this client id"),
    ("--group", "group", str, "only requests naming this group"),
    ("--topic", "topic", str, "only requests naming this topic"),
    ("--partition", "partition", int, "only requests naming this partition"),
    ("--node-id", "node_id", int, "only on the broker with this node id"),
    ("--after", "after", int, "let the first N matching requests through"),
    ("--probability", "probability", float, "fire on this share of matching requests"),
    ("--seed", "seed", int, "seed of --probability"),
    ("--error", "error", str, "answer with this Kafka error (name or code)"),
    ("--latency-ms", "latency_ms", int, "answer this many ms later"),
)


def _times(text: str) -> int | str:
    if text.lower() == "always":
        return "always"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a count or 'always', got {text!r}") from None


def _api(text: str) -> str | int:
    return int(text) if text.isdigit() else text


def _offset(text: str) -> dict[str, Any]:
    """TOPIC:PARTITION=OFFSET"""
    try:
        where, offset = text.rsplit("=", 1)
        topic, partition = where.rsplit(":", 1)
        return {"topic": topic, "partition": int(partition), "offset": int(offset)}
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected TOPIC:PARTITION=OFFSET, got {text!r}") from None


def _request_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--api", action="append", type=_api,
                   help="API name or key (repeatable: any of them)")
    p.add_argument("--group")
    p.add_argument("--client-id")
    p.add_argument("--version", type=int)
    p.add_argument("--error", help="a Kafka error name that must appear in the answer")
    p.add_argument("--connection", type=int, help="the connection's number")
    p.add_argument("--since", type=int, help="only requests logged after this seq")


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    found = {"api": args.api, "group": args.group, "client_id": args.client_id,
             "version": args.version, "error": args.error, "connection": args.connection,
             "since": args.since}
    return {k: v for k, v in found.items() if v is not None}


def _wait_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait (default: 10); past it the API answers 408")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "control", help="steer a broker through its HTTP control API (tests only)",
        description="Call the HTTP control API of a broker run with `kcsim serve "
        "--control-port PORT`, and print its JSON answer. It changes the broker's behaviour: "
        "for tests only (docs/control-http.md).")
    p.add_argument("--url", default=os.environ.get(URL_ENV),
                   help=f"the API's address, e.g. http://127.0.0.1:9644 [env {URL_ENV}]")
    p.add_argument("--http-timeout", type=float, default=DEFAULT_HTTP_TIMEOUT_S,
                   help="seconds to wait for an answer, besides a wait's own time-out")
    p.set_defaults(run=run, parser=p)
    what = p.add_subparsers(dest="area", required=True, metavar="AREA")

    clock = what.add_parser("clock", help="the broker's clock: now, advance MS, freeze, resume")
    clock_do = clock.add_subparsers(dest="action", required=True)
    clock_do.add_parser("now", help="the broker's time").set_defaults(call=_clock_now)
    advance = clock_do.add_parser("advance", help="move the time MS milliseconds forward")
    advance.add_argument("ms", type=int)
    advance.set_defaults(call=_clock_advance)
    clock_do.add_parser("freeze", help="stop the time").set_defaults(call=_clock_post("freeze"))
    clock_do.add_parser("resume", help="let it run again").set_defaults(call=_clock_post("resume"))

    faults = what.add_parser("faults", help="fault rules: add, list, get, remove, clear, release")
    faults_do = faults.add_subparsers(dest="action", required=True)
    add = faults_do.add_parser("add", help="install a rule; prints it with its id")
    add.add_argument("--api", action="append", type=_api, required=True,
                     help="API name or key it matches (repeatable: any of them)")
    for flag, field, kind, help_text in _RULE_FLAGS:
        add.add_argument(flag, dest=f"rule_{field}", type=kind, help=help_text)
    add.add_argument("--times", dest="rule_times", type=_times,
                     help="fire on N requests, or 'always' until removed (default: 1)")
    add.add_argument("--hold", dest="rule_hold", action="store_true", default=None,
                     help="hold requests until released")
    add.add_argument("--close", dest="rule_close", choices=("before", "after"),
                     help="close the connection before or after answering")
    add.add_argument("--no-answer", dest="rule_no_answer", action="store_true", default=None,
                     help="never answer")
    add.set_defaults(call=_faults_add)
    faults_do.add_parser("list", help="every rule with its counts").set_defaults(
        call=lambda c, a: c.call("GET", "/faults"))
    for name, method, help_text in (("get", "GET", "one rule with its counts"),
                                    ("remove", "DELETE", "uninstall a rule")):
        one = faults_do.add_parser(name, help=help_text)
        one.add_argument("id", type=int)
        one.set_defaults(call=_fault_call(method, ""))
    faults_do.add_parser("clear", help="remove every rule").set_defaults(
        call=lambda c, a: c.call("DELETE", "/faults"))
    release = faults_do.add_parser("release", help="let held requests go on (of one rule, or all)")
    release.add_argument("id", type=int, nargs="?")
    release.set_defaults(call=_faults_release)

    coordinator = what.add_parser("coordinator", help="make a group's coordinator loading, "
                                  "unavailable or available again")
    coordinator.add_argument("group")
    coordinator.add_argument("state", choices=("loading", "unavailable", "available"))
    coordinator.set_defaults(call=lambda c, a: c.call(
        "POST", "/coordinator", {"group": a.group, "state": a.state}))

    _register_nodes(what)

    requests = what.add_parser("requests", help="the request log, filtered")
    _request_filters(requests)
    requests.add_argument("--clear", action="store_true", help="empty the log instead")
    requests.set_defaults(call=_requests)

    wait = what.add_parser("wait", help="wait for a group, committed offsets, a request or a rule")
    wait_for = wait.add_subparsers(dest="action", required=True)
    group = wait_for.add_parser("group", help="until the group is in a state with N members")
    group.add_argument("group")
    group.add_argument("--state", default="Stable", help="default: Stable; 'any' for any")
    group.add_argument("--members", type=int)
    _wait_timeout(group)
    group.set_defaults(call=_wait_group)
    committed = wait_for.add_parser("committed", help="until the group committed these offsets")
    committed.add_argument("group")
    committed.add_argument("offsets", nargs="*", type=_offset, metavar="TOPIC:PARTITION=OFFSET",
                           help="none: until the group has no committed offsets")
    _wait_timeout(committed)
    committed.set_defaults(call=lambda c, a: c.call(
        "POST", "/wait/committed", {"group": a.group, "offsets": a.offsets,
                                    "timeout": a.timeout}, wait_s=a.timeout))
    request = wait_for.add_parser("request", help="until COUNT matching requests were answered")
    _request_filters(request)
    request.add_argument("--count", type=int, default=1)
    _wait_timeout(request)
    request.set_defaults(call=lambda c, a: c.call(
        "POST", "/wait/request", {**_filters(a), "count": a.count, "timeout": a.timeout},
        wait_s=a.timeout))
    fault = wait_for.add_parser("fault", help="until a rule fired N times or holds N requests")
    fault.add_argument("id", type=int)
    fault.add_argument("--fired", type=int)
    fault.add_argument("--held", type=int)
    _wait_timeout(fault)
    fault.set_defaults(call=lambda c, a: c.call(
        "POST", "/wait/fault", {"id": a.id, "fired": a.fired, "held": a.held,
                                "timeout": a.timeout}, wait_s=a.timeout))

    maintenance = what.add_parser("log-maintenance",
                                  help="run retention and the log cleaner over every topic now")
    maintenance.add_argument("--roll", action="store_true",
                             help="first close every active segment holding records")
    maintenance.set_defaults(call=lambda c, a: c.call("POST", "/log-maintenance",
                                                      {"roll": a.roll}))

    state = what.add_parser("state", help="snapshots: groups, members, offsets, paused, lag")
    state_of = state.add_subparsers(dest="action", required=True)
    for name, help_text in (("groups", "groups with their state and members"),
                            ("offsets", "committed offsets"),
                            ("paused", "paused partitions (KIP-1249)"),
                            ("lag", "lag per partition: the log end minus the committed offset")):
        snapshot = state_of.add_parser(name, help=help_text)
        snapshot.add_argument("--group", help="only this group")
        snapshot.set_defaults(call=_state(name))
    members = state_of.add_parser("members", help="a group's members and their partitions")
    members.add_argument("group")
    members.set_defaults(call=lambda c, a: c.call("GET", "/state/members", query={"group": a.group}))


def _register_nodes(what: argparse._SubParsersAction) -> None:
    """`nodes`, `leader` and `leaders` of a several-broker kcsim (--brokers N)."""
    nodes = what.add_parser("nodes", help="the nodes of a --brokers N kcsim: list, stop, start")
    nodes_do = nodes.add_subparsers(dest="action", required=True)
    nodes_do.add_parser("list", help="each node, live or not, with its addresses").set_defaults(
        call=lambda c, a: c.call("GET", "/nodes"))
    for action, help_text in (("stop", "stop a node: its listeners close, its leaders move"),
                              ("start", "start a stopped node again on its ports")):
        one = nodes_do.add_parser(action, help=help_text)
        one.add_argument("node", type=int)
        one.set_defaults(call=_node_call(action))
    leader = what.add_parser("leader", help="move a partition's leader to a node")
    leader.add_argument("topic")
    leader.add_argument("partition", type=int)
    leader.add_argument("node", type=int)
    leader.set_defaults(call=lambda c, a: c.call(
        "POST", "/partitions/leader", {"topic": a.topic, "partition": a.partition,
                                       "node": a.node}))
    move = what.add_parser("move-coordinator",
                           help="move a group's (or transactional id's) coordinator to a node")
    move.add_argument("key", help="the group id (or transactional id, with --transactional)")
    move.add_argument("node", type=int)
    move.add_argument("--transactional", action="store_true",
                      help="the key is a transactional id")
    move.add_argument("--load-ms", type=int, default=0,
                      help="answer COORDINATOR_LOAD_IN_PROGRESS this long (broker time)")
    move.set_defaults(call=_move_coordinator)
    shuffle = what.add_parser("shuffle-leaders", help="a random live leader for every partition")
    shuffle.add_argument("--seed", type=int)
    shuffle.set_defaults(call=lambda c, a: c.call("POST", "/leaders/shuffle", {"seed": a.seed}))


def _node_call(action: str) -> Callable[[ControlClient, argparse.Namespace], Any]:
    return lambda client, args: client.call("POST", f"/nodes/{args.node}/{action}", {})


def _move_coordinator(client: ControlClient, args: argparse.Namespace) -> Any:
    key = "transactional_id" if args.transactional else "group"
    return client.call("POST", "/coordinator/move",
                       {key: args.key, "node": args.node, "load_ms": args.load_ms})


def _clock_now(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("GET", "/clock")


def _clock_advance(client: ControlClient, args: argparse.Namespace) -> Any:
    return client.call("POST", "/clock/advance", {"ms": args.ms})


def _clock_post(action: str) -> Callable[[ControlClient, argparse.Namespace], Any]:
    return lambda client, args: client.call("POST", f"/clock/{action}", {})


def _faults_add(client: ControlClient, args: argparse.Namespace) -> Any:
    rule: dict[str, Any] = {"api": args.api[0] if len(args.api) == 1 else args.api}
    for name, value in vars(args).items():
        if name.startswith("rule_") and value is not None:
            rule[name.removeprefix("rule_")] = value
    if rule.get("times") == "always":
        rule["times"] = None  # fires until removed
    return client.call("POST", "/faults", rule)


def _fault_call(method: str, suffix: str) -> Callable[[ControlClient, argparse.Namespace], Any]:
    return lambda client, args: client.call(method, f"/faults/{args.id}{suffix}")


def _faults_release(client: ControlClient, args: argparse.Namespace) -> Any:
    path = "/faults/release" if args.id is None else f"/faults/{args.id}/release"
    return client.call("POST", path, {})


def _requests(client: ControlClient, args: argparse.Namespace) -> Any:
    if args.clear:
        return client.call("DELETE", "/requests")
    return client.call("GET", "/requests", query=_filters(args))


def _wait_group(client: ControlClient, args: argparse.Namespace) -> Any:
    state = None if args.state.lower() == "any" else args.state
    return client.call("POST", "/wait/group", {"group": args.group, "state": state,
                                               "members": args.members,
                                               "timeout": args.timeout}, wait_s=args.timeout)


def _state(name: str) -> Callable[[ControlClient, argparse.Namespace], Any]:
    return lambda client, args: client.call("GET", f"/state/{name}", query={"group": args.group})


def run(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args.parser
    if not args.url:
        parser.error(f"--url is required (or set {URL_ENV})")
    try:
        client = ControlClient(args.url, args.http_timeout)
    except ValueError as exc:
        parser.error(f"--url: {exc}")
    try:
        answer = args.call(client, args)
    except ControlError as exc:
        print(f"kcsim control: {exc}", file=sys.stderr)
        return FAILED
    json.dump(answer, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
