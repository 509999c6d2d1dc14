"""What every part of the coordinator stands on: the shared runtime (state, the fold's
dispatch, the effects of a call), time-outs, committed offsets, paused sets, group
state names and the records that remove a group. Imports nothing else of the coordinator."""
