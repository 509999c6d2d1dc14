"""What tests add to a broker (the public face is kcsim.testing).

One module per concern (the clock they advance, freeze and resume is the shell's,
`shell/clock.py`; `handles` steers it):

- `faults`: fault rules matched at the dispatch point;
- `request_log`: every answered request, decoded when queried;
- `fields`: what a request names and what its answer reports;
- `changes`: the notices that wake waits;
- `waits` and `views`: conditions on the state, and what a timed-out wait shows;
- `handles`: what a test holds, the same controls for a broker on a thread and
  for one inside the test's trio run.
"""
