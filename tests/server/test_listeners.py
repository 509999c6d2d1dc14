"""Listeners as Kafka names them: checked at start-up, and each answers with its own address."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys

import pytest

from kcsim.protocol.codecs import codec
from kcsim.server import config
from kcsim.server.embedded import EmbeddedServer
from kcsim.server.listeners import Listener

from .rawkafka import decode_response, request_frame


def plans(**env: str) -> list[tuple[str, str, int, str, int]]:
    """(name, bind host, port, advertised host, advertised port) once bound to port 7000+i."""
    cfg = config.load(env={f"KCSIM_{k.upper()}": v for k, v in env.items()})
    out = []
    for i, plan in enumerate(cfg.listener_plans):
        address = plan.advertise(plan.port or 7000 + i)
        out.append((plan.name, plan.host, plan.port, address.host, address.port))
    return out


def test_the_shorthand_is_one_plaintext_listener():
    assert plans() == [("PLAINTEXT", "127.0.0.1", 9092, "127.0.0.1", 9092)]
    assert plans(host="0.0.0.0", port="0") == [("PLAINTEXT", "0.0.0.0", 0, "127.0.0.1", 7000)]
    assert plans(host="0.0.0.0", advertised_host="broker", advertised_port="19092") == [
        ("PLAINTEXT", "0.0.0.0", 9092, "broker", 19092)]
    assert plans(advertised_listeners="PLAINTEXT://broker:1") == [
        ("PLAINTEXT", "127.0.0.1", 9092, "broker", 1)]


def test_listeners_in_kafkas_syntax():
    assert plans(listeners="PLAINTEXT_HOST://0.0.0.0:9092, plaintext://:29092,V6://[::1]:0",
                 advertised_listeners="PLAINTEXT://kcsim:29092,PLAINTEXT_HOST://localhost:19092") == [
        ("PLAINTEXT_HOST", "0.0.0.0", 9092, "localhost", 19092),
        ("PLAINTEXT", "", 29092, "kcsim", 29092),
        ("V6", "::1", 0, "::1", 7002),
    ]


def test_a_listener_prints_as_kafka_writes_it():
    assert str(Listener("A", "kcsim", 9092)) == "A://kcsim:9092"
    assert str(Listener("B", "::1", 9092)) == "B://[::1]:9092"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"KCSIM_LISTENERS": "kcsim:9092"},
         "KCSIM_LISTENERS=kcsim:9092: 'kcsim:9092' is not NAME://host:port"),
        ({"KCSIM_LISTENERS": "A://:9092,A://:9093"},
         "KCSIM_LISTENERS=A://:9092,A://:9093: listener name A appears twice"),
        ({"KCSIM_LISTENERS": "A://:9092,B://127.0.0.1:9092"},
         "KCSIM_LISTENERS=A://:9092,B://127.0.0.1:9092: port 9092 is given to two listeners"),
        ({"KCSIM_LISTENERS": "A://:65536"},
         "KCSIM_LISTENERS=A://:65536: 'A://:65536': port 65536 is outside 0..65535"),
        ({"KCSIM_LISTENERS": "SASL_SSL://:9093", "KCSIM_SASL_ENABLED_MECHANISMS": "GSSAPI"},
         "KCSIM_SASL_ENABLED_MECHANISMS=GSSAPI: GSSAPI: kcsim serves the SASL mechanisms "
         "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"),
        ({"KCSIM_SASL_PLAIN_USERS": "alice:secret,bob"},
         "KCSIM_SASL_PLAIN_USERS=alice:secret,bob: 'bob' is not name:password"),
        ({"KCSIM_ADVERTISED_LISTENERS": "A://0.0.0.0:9092"},
         "KCSIM_ADVERTISED_LISTENERS=A://0.0.0.0:9092: 'A://0.0.0.0:9092': clients cannot "
         "connect to 0.0.0.0"),
        ({"KCSIM_ADVERTISED_LISTENERS": "A://kcsim:0"},
         "KCSIM_ADVERTISED_LISTENERS=A://kcsim:0: 'A://kcsim:0': port 0 is outside 1..65535"),
        ({"KCSIM_LISTENERS": "A://:9092", "KCSIM_ADVERTISED_LISTENERS": "B://kcsim:9092"},
         "KCSIM_ADVERTISED_LISTENERS=B://kcsim:9092: advertises B, which is not a listener "
         "(listeners: A://:9092)"),
        ({"KCSIM_ADVERTISED_LISTENERS": "INTERNAL://kcsim:29092"},
         "KCSIM_ADVERTISED_LISTENERS=INTERNAL://kcsim:29092: advertises INTERNAL, which is not "
         "a listener (listeners: PLAINTEXT://127.0.0.1:9092)"),
        ({"KCSIM_LISTENERS": "A://:9092", "KCSIM_PORT": "9093"},
         "KCSIM_PORT=9093 cannot be combined with KCSIM_LISTENERS=A://:9092: give the address "
         "in --listeners (KCSIM_LISTENERS) instead"),
        ({"KCSIM_ADVERTISED_LISTENERS": "PLAINTEXT://a:1", "KCSIM_ADVERTISED_HOST": "b"},
         "KCSIM_ADVERTISED_HOST=b cannot be combined with KCSIM_ADVERTISED_LISTENERS"),
        ({"KCSIM_LISTENERS": "A://:1,B://:2", "KCSIM_LISTENER_SECURITY_PROTOCOL_MAP": "A:PLAINTEXT"},
         "KCSIM_LISTENER_SECURITY_PROTOCOL_MAP=A:PLAINTEXT: listener B has no security protocol "
         "in the listener security protocol map"),
        ({"KCSIM_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:SASL_TLS"},
         "KCSIM_LISTENER_SECURITY_PROTOCOL_MAP=PLAINTEXT:SASL_TLS: 'PLAINTEXT:SASL_TLS' is not "
         "NAME:PROTOCOL with a protocol of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
        ({"KCSIM_LISTENER_SECURITY_PROTOCOL_MAP": "A=PLAINTEXT"},
         "KCSIM_LISTENER_SECURITY_PROTOCOL_MAP=A=PLAINTEXT: 'A=PLAINTEXT' is not NAME:PROTOCOL"),
    ],
)
def test_listener_settings_that_cannot_work_are_named(env, message):
    with pytest.raises(config.ConfigError) as excinfo:
        config.load(env=env)
    assert str(excinfo.value).startswith(message)


def test_a_protocol_map_of_plaintext_names_is_taken_as_kafkas():
    cfg = config.load(env={
        "KCSIM_LISTENERS": "SSL://:9093,PLAINTEXT_HOST://:9092",
        "KCSIM_LISTENER_SECURITY_PROTOCOL_MAP": "SSL:PLAINTEXT,PLAINTEXT_HOST:PLAINTEXT"})
    assert [p.name for p in cfg.listener_plans] == ["SSL", "PLAINTEXT_HOST"]
    assert [p.protocol for p in cfg.listener_plans] == ["PLAINTEXT", "PLAINTEXT"]


def test_a_listener_speaks_ssl_by_its_name_or_by_the_map():
    by_name = config.load(env={"KCSIM_LISTENERS": "SSL://:9093,PLAINTEXT://:9092"})
    assert [p.protocol for p in by_name.listener_plans] == ["SSL", "PLAINTEXT"]
    by_map = config.load(env={"KCSIM_LISTENERS": "EXTERNAL://:9093,INTERNAL://:9092",
                              "KCSIM_LISTENER_SECURITY_PROTOCOL_MAP":
                                  "EXTERNAL:SSL,INTERNAL:PLAINTEXT"})
    assert [p.protocol for p in by_map.listener_plans] == ["SSL", "PLAINTEXT"]


def test_a_listener_speaks_sasl_by_its_name_or_by_the_map():
    by_name = config.load(env={"KCSIM_LISTENERS": "SASL_SSL://:9094,SASL_PLAINTEXT://:9095"})
    assert [p.protocol for p in by_name.listener_plans] == ["SASL_SSL", "SASL_PLAINTEXT"]
    by_map = config.load(env={"KCSIM_LISTENERS": "EXTERNAL://:9094,INTERNAL://:9092",
                              "KCSIM_LISTENER_SECURITY_PROTOCOL_MAP":
                                  "EXTERNAL:SASL_SSL,INTERNAL:SASL_PLAINTEXT"})
    assert [p.protocol for p in by_map.listener_plans] == ["SASL_SSL", "SASL_PLAINTEXT"]


def test_a_config_built_in_code_is_checked_for_its_listeners_too():
    cfg = config.Config(listeners="A://:0", port=0)
    with pytest.raises(config.ConfigError, match="port=0 cannot be combined with listeners="):
        config.validate(cfg)


def test_serve_refuses_a_sasl_mechanism_it_cannot_speak_with_status_2():
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KCSIM_")}
    proc = subprocess.run([sys.executable, "-m", "kcsim", "serve", "--in-memory",
                           "--listeners", "SASL_SSL://127.0.0.1:0",
                           "--sasl-enabled-mechanisms", "PLAIN,GSSAPI"],
                          capture_output=True, text=True, timeout=30, env=clean)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(
        "kcsim: --sasl-enabled-mechanisms PLAIN,GSSAPI: GSSAPI: kcsim serves the SASL "
        "mechanisms PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER")


# -- on the wire: each listener answers with its own advertised address ----------------------


def _call(address: tuple[str, int], api_key: int, version: int, request: object) -> object:
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(request_frame(api_key, version, 7, request))
        size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
        correlation_id, response = decode_response(api_key, version,
                                                   sock.recv(size, socket.MSG_WAITALL))
    assert correlation_id == 7
    return response


def _where(address: tuple[str, int]) -> dict[str, object]:
    """What Metadata, FindCoordinator (old and batched) and DescribeCluster say, through `address`."""
    metadata = _call(address, 3, 12, codec(3, "request").cls(topics=None))
    find = codec(10, "request").cls
    old = _call(address, 10, 3, find(key="g", key_type=0))
    batched = _call(address, 10, 4, find(key_type=0, coordinator_keys=["g", "h"]))
    cluster = _call(address, 60, 0, codec(60, "request").cls())
    return {
        "metadata": [(b.node_id, b.host, b.port) for b in metadata.brokers],
        "coordinator": (old.node_id, old.host, old.port),
        "coordinators": [(c.key, c.host, c.port) for c in batched.coordinators],
        "cluster": [(b.broker_id, b.host, b.port) for b in cluster.brokers],
    }


def test_each_listener_answers_with_its_own_address():
    with EmbeddedServer(listeners="HOST://127.0.0.1:0,DOCKER://127.0.0.1:0",
                        advertised_listeners="DOCKER://kcsim:29092") as srv:
        assert srv.server is not None
        host, docker = srv.server.advertised
        assert (host.name, host.host, docker) == ("HOST", "127.0.0.1",
                                                  Listener("DOCKER", "kcsim", 29092))
        bound = {s.socket.getsockname()[1] for s in srv.server._listeners}
        assert srv.port == host.port and len(bound) == 2
        [docker_port] = bound - {host.port}
        for _ in range(2):  # twice: cached answers are per listener too
            through_host = _where(("127.0.0.1", host.port))
            through_docker = _where(("127.0.0.1", docker_port))
            assert through_host == {
                "metadata": [(1, "127.0.0.1", host.port)],
                "coordinator": (1, "127.0.0.1", host.port),
                "coordinators": [("g", "127.0.0.1", host.port), ("h", "127.0.0.1", host.port)],
                "cluster": [(1, "127.0.0.1", host.port)],
            }
            assert through_docker == {
                "metadata": [(1, "kcsim", 29092)],
                "coordinator": (1, "kcsim", 29092),
                "coordinators": [("g", "kcsim", 29092), ("h", "kcsim", 29092)],
                "cluster": [(1, "kcsim", 29092)],
            }


def test_ready_line_keeps_its_form_and_names_every_advertised_listener(kcsim_factory):
    server = kcsim_factory(listeners="HOST://127.0.0.1:0,DOCKER://127.0.0.1:0",
                           advertised_listeners="DOCKER://kcsim:29092", in_memory=True)
    head, _, tail = server.ready_line.partition("; ")
    assert head == f"kcsim ready on 127.0.0.1:{server.port}"
    assert tail == f"advertised listeners HOST://127.0.0.1:{server.port},DOCKER://kcsim:29092"
