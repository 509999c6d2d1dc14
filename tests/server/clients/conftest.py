"""Fixtures of the real-client tests."""

from __future__ import annotations

import pytest

from .javaclient import CLIENT_VERSIONS


@pytest.fixture(params=CLIENT_VERSIONS, ids=[f"kafka-clients-{v}" for v in CLIENT_VERSIONS])
def java_version(request: pytest.FixtureRequest) -> str:
    """The kafka-clients version a Java test runs on: each test runs once per version."""
    return str(request.param)
