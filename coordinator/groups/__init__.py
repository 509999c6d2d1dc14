"""Classic groups: membership, the rebalance protocol and their records (Kafka's ClassicGroup)."""
