"""The pieces of `kcsim consumer-groups` (kafka-consumer-groups.sh): options, views, actions."""
