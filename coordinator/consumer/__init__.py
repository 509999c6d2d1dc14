"""KIP-848 consumer groups: server-side assignment, member epochs and reconciliation."""
