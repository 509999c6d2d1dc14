"""Fixtures of the real-client tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .javaclient import CLIENT_VERSIONS
from .javagroups import JavaGroupClient

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path


@pytest.fixture(params=CLIENT_VERSIONS, ids=[f"kafka-clients-{v}" for v in CLIENT_VERSIONS])
def java_version(request: pytest.FixtureRequest) -> str:
    """The kafka-clients version a Java test runs on: each test runs once per version."""
    return str(request.param)


def java_drivers(tmp_path: Path, version: str) -> Iterator[Callable[[str], JavaGroupClient]]:
    """Start Java drivers (one JVM each); their stderr is printed at teardown (pytest
    shows it on failure)."""
    opened: list[JavaGroupClient] = []

    def start(bootstrap: str) -> JavaGroupClient:
        client = JavaGroupClient(bootstrap, tmp_path / f"java{len(opened)}.stderr.log",
                                 version)
        opened.append(client)
        return client

    yield start
    for client in opened:
        client.close()
        print(f"Java driver stderr ({client.log_path}):\n{client.stderr()}")


@pytest.fixture
def java(tmp_path: Path) -> Iterator[Callable[[str], JavaGroupClient]]:
    """Java drivers on kafka-clients 3.9.1 (tests/server/clients/test_groups_java.py runs
    every version through `java_version`)."""
    yield from java_drivers(tmp_path, CLIENT_VERSIONS[0])
