"""The socket shell: everything that waits or touches the outside world.

`server` binds the listeners, runs one task per connection (read, cut frames,
answer them through the request layer, make their records durable, send) and the
timer (`timer`) that ticks both coordinators; `socket_io` reads and writes the sockets,
`limits` raises the open-file limit, `clock` is the time every deadline is
measured against (tests advance, freeze and resume it). The shell knows the
request layer by its face (`kcsim.server.requests`) only.
"""
