"""Operator tools built on the admin client (the `kcsim` sub-commands besides serve)."""
