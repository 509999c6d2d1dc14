"""Fixtures of the real-client tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .javagroups import JavaGroupClient

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path


@pytest.fixture
def java(tmp_path: Path) -> Iterator[Callable[[str], JavaGroupClient]]:
    """Start Java drivers (one JVM each); their stderr is printed at teardown (pytest
    shows it on failure)."""
    opened: list[JavaGroupClient] = []

    def start(bootstrap: str) -> JavaGroupClient:
        client = JavaGroupClient(bootstrap, tmp_path / f"java{len(opened)}.stderr.log")
        opened.append(client)
        return client

    yield start
    for client in opened:
        client.close()
        print(f"Java driver stderr ({client.log_path}):\n{client.stderr()}")
