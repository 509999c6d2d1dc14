"""kcsim's data pipeline on Spark: the logs of a data directory as DataFrames,
compaction at scale and consumer-group reports.

Importing this package is cheap: PySpark is imported by the modules that need
it (``source``, ``session``, ``compact``, ``report``), so the ``kcsim`` command
line can offer ``kcsim pipeline`` without loading Spark for ``kcsim serve``.
Install with the ``[spark]`` extra.
"""
