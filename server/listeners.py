"""Listeners as Kafka names them: `NAME://host:port`, comma-separated.

`listeners` says where connections are accepted, `advertised_listeners` what
address each listener hands to the clients that came through it (in Metadata,
FindCoordinator and DescribeCluster). One broker can so serve clients that reach
it by different addresses at once: the host through a published port, other
containers through a network alias. `--host/--port/--advertised-host/
--advertised-port` are the one-listener shorthand, a listener named PLAINTEXT.

Each listener speaks a security protocol: what `listener_security_protocol_map`
maps its name to, or, without a map, its name when that is a protocol's
(`SSL://:9093` speaks SSL, `SASL_SSL://:9094` SASL_SSL) and PLAINTEXT otherwise.
kcsim serves all four of Kafka's: PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL.
"""

from __future__ import annotations

import re
from typing import NamedTuple

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
WILDCARD_HOSTS = ("", "0.0.0.0", "::")
TLS_PROTOCOLS = frozenset({"SSL", "SASL_SSL"})  # a TLS handshake first
SASL_PROTOCOLS = frozenset({"SASL_PLAINTEXT", "SASL_SSL"})  # then a SASL exchange
SHORTHAND_NAME = "PLAINTEXT"

_ENTRY = re.compile(r"(?P<name>[A-Za-z0-9_]+)://(?:\[(?P<ipv6>[0-9A-Fa-f:.%]+)\]|(?P<host>[^\s:/\[\]]*))"
                    r":(?P<port>[0-9]+)")
_NAME = re.compile(r"[A-Za-z0-9_]+")


class Listener(NamedTuple):
    """One `NAME://host:port`; an empty host means every interface. `node`: the node whose
    address it is when one kcsim plays several brokers (`--brokers`), else -1."""

    name: str
    host: str
    port: int
    node: int = -1

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


class ListenerPlan(NamedTuple):
    """Where one listener binds, and what it advertises (None: derived from the bind)."""

    name: str
    host: str
    port: int
    advertised_host: str | None = None
    advertised_port: int | None = None
    protocol: str = "PLAINTEXT"  # the security protocol it speaks

    def advertise(self, bound_port: int, node: int = -1) -> Listener:
        """The address clients of this listener are given, once its port is known.

        A listener on every interface advertises 127.0.0.1 unless told otherwise."""
        host = self.advertised_host or (self.host if self.host not in WILDCARD_HOSTS
                                        else "127.0.0.1")
        return Listener(self.name, host, self.advertised_port or bound_port, node)

    def for_node(self, index: int) -> ListenerPlan:
        """The plan of the index-th node of several: the ports after this one's (a free
        port for each when this one is 0), its advertised port likewise."""
        if index == 0:
            return self
        return self._replace(port=self.port + index if self.port else 0,
                             advertised_port=(self.advertised_port + index
                                              if self.advertised_port else None))

    @property
    def local_host(self) -> str:
        """Where a process on this machine reaches the listener (tests, health checks)."""
        return {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(self.host, self.host)


def parse(text: str, *, advertised: bool = False) -> tuple[Listener, ...]:
    """The listeners of a Kafka listener list; ValueError says what is wrong."""
    entries = [part.strip() for part in text.split(",")]
    if not any(entries):
        raise ValueError("no listener given")
    out: list[Listener] = []
    for entry in entries:
        match = _ENTRY.fullmatch(entry)
        if match is None:
            raise ValueError(f"{entry!r} is not NAME://host:port")
        name = match["name"].upper()
        host = match["ipv6"] if match["ipv6"] is not None else match["host"]
        port = int(match["port"])
        if port > 65535 or (advertised and port == 0):
            raise ValueError(f"{entry!r}: port {port} is outside {int(advertised)}..65535")
        if advertised and host in WILDCARD_HOSTS:
            raise ValueError(f"{entry!r}: clients cannot connect to {host or 'an empty host'}; "
                             "advertise a host name or address they can reach")
        if any(seen.name == name for seen in out):
            raise ValueError(f"listener name {name} appears twice")
        if not advertised and port and any(seen.port == port for seen in out):
            raise ValueError(f"port {port} is given to two listeners")
        out.append(Listener(name, host, port))
    return tuple(out)


def parse_protocol_map(text: str) -> dict[str, str]:
    """`NAME:PROTOCOL,...` with every protocol one of Kafka's; ValueError otherwise."""
    mapping: dict[str, str] = {}
    for entry in (part.strip() for part in text.split(",")):
        name, sep, protocol = entry.partition(":")
        name, protocol = name.strip().upper(), protocol.strip().upper()
        if not sep or not _NAME.fullmatch(name) or protocol not in SECURITY_PROTOCOLS:
            raise ValueError(f"{entry!r} is not NAME:PROTOCOL with a protocol of "
                             + ", ".join(SECURITY_PROTOCOLS))
        if name in mapping:
            raise ValueError(f"listener name {name} appears twice")
        mapping[name] = protocol
    return mapping


def protocols(listeners: tuple[Listener, ...], protocol_map: dict[str, str] | None) -> dict[str, str]:
    """The security protocol of each listener, by name: by the map, or by its name when
    there is none; ValueError for a listener the map does not name."""
    out = {}
    for listener in listeners:
        if protocol_map is not None:
            if listener.name not in protocol_map:
                raise ValueError(f"listener {listener.name} has no security protocol "
                                 "in the listener security protocol map")
            out[listener.name] = protocol_map[listener.name]
        else:
            out[listener.name] = (listener.name if listener.name in SECURITY_PROTOCOLS
                                  else "PLAINTEXT")
    return out


def plan(listeners: tuple[Listener, ...], advertised: tuple[Listener, ...],
         protocol_of: dict[str, str] | None = None) -> tuple[ListenerPlan, ...]:
    """Bind plans in the order listeners were given; advertised entries must name one.
    `protocol_of`: each listener's security protocol (PLAINTEXT when not named)."""
    by_name = {a.name: a for a in advertised}
    unknown = set(by_name) - {listener.name for listener in listeners}
    if unknown:
        raise ValueError(f"advertises {', '.join(sorted(unknown))}, which is not a listener "
                         f"(listeners: {', '.join(str(x) for x in listeners)})")
    plans = []
    for x in listeners:
        a = by_name.get(x.name)
        protocol = (protocol_of or {}).get(x.name, "PLAINTEXT")
        plans.append(ListenerPlan(x.name, x.host, x.port, a and a.host, a and a.port, protocol))
    return tuple(plans)
