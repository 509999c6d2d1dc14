"""The pure group coordinator: classic groups, KIP-848 consumer groups, KIP-1249
paused partitions and committed offsets, as a fold of records driven by
(request, now_ms). No trio, no sockets, no clock, no file I/O."""
