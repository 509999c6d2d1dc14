"""ApiVersions (18): the table of served APIs, straight from the route table."""

from __future__ import annotations

from typing import Any

from kcsim.protocol.codecs import response_class

from ..routes import served, serves

ApiVersionsResponse = response_class(18)
_INVALID_REQUEST = 42


def _constant(broker: Any) -> int:
    return 0


@serves(18, cache_state=_constant)
def api_versions(broker: Any, ctx: Any, request: Any) -> Any:
    """The table never changes while a server runs, so answers are cached."""
    table = served(broker.config).advertised(ApiVersionsResponse)
    return ApiVersionsResponse(error_code=0, api_keys=table, throttle_time_ms=0)
