"""ApiVersions (18): the table of served APIs, straight from the route table."""

from __future__ import annotations

from typing import Any

from protocol.codecs import response_class

from ..dispatch import serves

ApiVersionsResponse = response_class(18)
_INVALID_REQUEST = 42


@serves(18)
def api_versions(broker: Any, ctx: Any, request: Any) -> Any:
    cached = broker.__dict__.get("_api_versions_table")
    if cached is None:
        cached = broker._api_versions_table = broker.advertised_versions(ApiVersionsResponse)
    return ApiVersionsResponse(error_code=0, api_keys=cached, throttle_time_ms=0)
