"""aiokafka and kafkajs over each secured listener: SSL (trusting the CA kcsim made), SASL_SSL
with SCRAM-SHA-512 (the user made through AlterUserScramCredentials) and SASL_PLAINTEXT with
PLAIN; each produces, consumes in a group and commits, and its commits carry its principal."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

from . import nodeclient
from .roundtrip import MESSAGES
from .test_sasl_clients import _confluent_scram_user, _principals_of

SECURED = {"listeners": "SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,"
                        "PLAINTEXT://127.0.0.1:0",
           "sasl_plain_users": "alice:alice-secret", "initial_rebalance_delay_ms": 0}
# (listener, mechanism, user, the principal its requests carry)
MODES = [("SSL", None, None, "User:ANONYMOUS"),
         ("SASL_SSL", "SCRAM-SHA-512", "carol", "User:carol"),
         ("SASL_PLAINTEXT", "PLAIN", "alice", "User:alice")]


@pytest.fixture
def kcsim_secured(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**SECURED)
    _confluent_scram_user(srv, "carol", "carol-secret")
    return srv


async def _aiokafka_round_trip(settings: dict, topic: str, group: str) -> int:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    producer = AIOKafkaProducer(**settings)
    await producer.start()
    try:
        for i in range(MESSAGES):
            await producer.send_and_wait(topic, f"v{i}".encode())
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(topic, group_id=group, auto_offset_reset="earliest",
                                enable_auto_commit=False, **settings)
    await consumer.start()
    try:
        seen = 0
        while seen < MESSAGES:
            batches = await asyncio.wait_for(consumer.getmany(timeout_ms=500), 30)
            seen += sum(len(records) for records in batches.values())
        await consumer.commit()
        return int(await consumer.committed(TopicPartition(topic, 0)))
    finally:
        await consumer.stop()


@pytest.mark.parametrize(("listener", "mechanism", "user", "principal"), MODES,
                         ids=[m[0] for m in MODES])
def test_aiokafka(kcsim_secured, listener, mechanism, user, principal):
    pytest.importorskip("aiokafka")
    from aiokafka.helpers import create_ssl_context

    settings: dict = {"bootstrap_servers": kcsim_secured.bootstrap_of(listener),
                      "security_protocol": listener}
    if "SSL" in listener:
        settings["ssl_context"] = create_ssl_context(cafile=kcsim_secured.ssl_ca_file)
    if mechanism is not None:
        settings |= {"sasl_mechanism": mechanism, "sasl_plain_username": user,
                     "sasl_plain_password": f"{user}-secret"}
    group = f"aiokafka-{listener}"
    committed = asyncio.run(_aiokafka_round_trip(settings, f"aiokafka-{listener}", group))
    assert committed == MESSAGES
    assert _principals_of(kcsim_secured, group) == {principal}


@pytest.mark.parametrize(("listener", "mechanism", "user", "principal"), MODES,
                         ids=[m[0] for m in MODES])
def test_kafkajs(kcsim_secured, listener, mechanism, user, principal):
    settings: dict = {"brokers": [kcsim_secured.bootstrap_of(listener)]}
    if "SSL" in listener:
        settings["caFile"] = kcsim_secured.ssl_ca_file
    if mechanism is not None:
        settings["sasl"] = {"mechanism": mechanism.lower(), "username": user,
                            "password": f"{user}-secret"}
    topic, group = f"kafkajs-{uuid.uuid4().hex[:6]}", f"kafkajs-{listener}"
    proc = nodeclient.run("roundtrip.js", json.dumps(settings), topic, group, str(MESSAGES))
    assert nodeclient.json_steps(proc)[-1] == {"step": "consume", "seen": MESSAGES,
                                               "committed": MESSAGES}
    assert kcsim_secured.committed(group) == {(topic, 0): MESSAGES}
    assert _principals_of(kcsim_secured, group) == {principal}

