"""ApiVersions (18): the table of served APIs, straight from the route table."""

from __future__ import annotations

from typing import Any

from protocol.codecs import response_class

from ..dispatch import serves

ApiVersionsResponse = response_class(18)
_INVALID_REQUEST = 42


@serves(18)
def api_versions(broker: Any, ctx: Any, request: Any) -> Any:
    """The table never changes while a server runs: encode it once per version."""
    cache = broker.response_cache.setdefault(18, {})
    body = cache.get(ctx.api_version)
    if body is None:
        table = broker.advertised_versions(ApiVersionsResponse)
        response = ApiVersionsResponse(error_code=0, api_keys=table, throttle_time_ms=0)
        body = cache[ctx.api_version] = broker.encode_body(18, ctx.api_version, response)
    return body
