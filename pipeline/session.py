"""A SparkSession set up for the pipeline: local by default, any cluster with a master URL.

Locally the driver and its Python workers stay on loopback and use this
interpreter (which has kcsim installed); on a cluster the executors need
kcsim installed with its ``[spark]`` extra and the data directory at the same
path (a shared filesystem), as for any file-based source.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from .extra import require_spark

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"

# Settings the pipeline's jobs rely on; --conf and the caller's own win over them.
DEFAULTS: dict[str, str] = {
    "spark.sql.python.filterPushdown.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.ui.showConsoleProgress": "false",
}
LOCAL_DEFAULTS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "8",
}


def spark_session(master: str | None = None, app_name: str = "kcsim-pipeline",
                  conf: Mapping[str, str] | None = None) -> SparkSession:
    """A session on ``master`` (``local[*]`` when None) with the kcsim source registered."""
    require_spark()
    from pyspark.sql import SparkSession

    from .source import register

    master = master or DEFAULT_MASTER
    local = master.startswith("local")
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in {**DEFAULTS, **(LOCAL_DEFAULTS if local else {}), **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    register(spark)
    return spark
