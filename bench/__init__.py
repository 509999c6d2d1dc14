"""kcsim benchmarks: `python -m bench` measures kcsim beside a trivial trio server.

Kept import-free so `python -m bench.floor` starts as fast as a bare trio program.
"""
