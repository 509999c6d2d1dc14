"""KIP-932 share groups, pure: the share partition's in-flight records, their durable
form (Kafka's share coordinator's snapshots and updates), the group's members and
Kafka's simple share assignor.

Nothing here reads the log or the clock: the caller passes the fetchable batches, the
aborted ranges and the time, and writes the records each change returns.
"""
