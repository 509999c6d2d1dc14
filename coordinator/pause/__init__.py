"""KIP-1249: partitions of a group set aside so their offsets can be reset while it runs."""
