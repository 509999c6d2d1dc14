"""One local Spark session for every pipeline test (starting one costs seconds)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """local[2], loopback only, UI off, two shuffle partitions; stopped at the end."""
    pytest.importorskip("pyspark", reason="the [spark] extra is not installed")
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from kcsim.pipeline.session import spark_session

    session = spark_session("local[2]", "kcsim-tests", {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.driver.memory": "1g",
    })
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def workload_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A data directory a real client workload wrote (scenario.py), its server stopped."""
    from tests.conftest import KcsimProcess

    from . import scenario

    base = tmp_path_factory.mktemp("workload")
    server = KcsimProcess(base / "data", base / "kcsim.stderr.log",
                          min_session_timeout_ms=1000, initial_rebalance_delay_ms=0).start()
    try:
        work = scenario.run(server.bootstrap)
    finally:
        server.stop()
    return base / "data", work
