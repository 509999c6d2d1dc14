"""One local Spark session for every pipeline test (starting one costs seconds)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator


REPO = Path(__file__).resolve().parents[2]
_connector: dict[str, str] = {}  # "missing": why Spark's Kafka connector could not be fetched


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """local[2], loopback only, UI off, two shuffle partitions, Spark's Kafka connector on its
    class path (fetched once into .cache/); stopped at the end."""
    pytest.importorskip("pyspark", reason="the [spark] extra is not installed")
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from kcsim.pipeline.connector import ConnectorUnavailable, connector_jars
    from kcsim.pipeline.session import spark_session

    conf = {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.driver.memory": "1g",
    }
    try:
        jars = connector_jars(REPO / ".cache" / "spark-kafka", REPO / ".cache" / "m2")
        conf["spark.jars"] = ",".join(str(j) for j in jars)
    except ConnectorUnavailable as exc:
        _connector["missing"] = str(exc)
    session = spark_session("local[2]", "kcsim-tests", conf)
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def kafka_spark(spark: Any) -> Any:
    """The session, for tests of Spark's Kafka connector: skipped loudly without it."""
    if "missing" in _connector:
        pytest.skip(f"NO SPARK KAFKA CONNECTOR: {_connector['missing']}")
    return spark


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
