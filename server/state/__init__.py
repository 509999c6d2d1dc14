"""Broker state: what one broker holds, and the one path every durable change takes.

`BrokerState` (`broker_state`) holds the topics and their partitions
(`topics`, `producer_state`), the group and transaction coordinators, the time of
the request being handled, and the hook told of changes once durable. It applies
records (live and at replay, `apply`), keeps both coordinators' deadlines and
fires them (`next_deadline`, `tick`). Handlers are given it, not the broker.

It knows no request decoding: it never imports codecs, the request layer or the
shell. What a handler answers with besides a response (`Durable`, `Pending`)
is declared here (`answers`), since `change` and `tick` build them too.
Nothing is imported here, so the pipeline reads `record_types` without loading
the state's trio side.
"""
