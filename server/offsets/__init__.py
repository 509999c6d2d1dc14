"""`__consumer_offsets`: the coordinator's records as a Kafka topic lag monitors can read.

`topic` appends, catches up, resyncs and compacts the topic; `activation` decides when
it starts being written (its first read) and owns the one hook told of durable
records; `checkpoint` brings it up to date with the replayed log at start-up.
See docs/consumer-offsets-topic.md.
"""
