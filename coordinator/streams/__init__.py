"""KIP-1071 streams groups: Kafka Streams applications as groups of the coordinator."""
