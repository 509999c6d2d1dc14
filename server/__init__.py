"""The broker, in rooms, each a subpackage with one job.

- `shell`: the sockets, the connections, the clock and the timer;
- `requests`: one request frame in, one answer out (decode, version check, fault rules,
  request log, handlers, encode), with no sockets;
- `state`: topics, partitions and both coordinators, changed by records, ticked by time;
- `offsets`: the `__consumer_offsets` topic, fed by its one durable hook;
- `control`: what tests add (fault rules, the request log, waits, the HTTP API).

At this level: the wiring (`app.build`, `config`, `listeners`, `durability`) and the
faces (`cli`, `embedded`, `in_trio`, `pytest_plugin`, `health`). The import contracts
in pyproject.toml keep the rooms in that order.
"""
