"""The compiled codec of every declared message, built lazily and cached.

`codec(api_key, "request")` gives the MessageCodec (classes + per-version
encode/decode); `REQUEST[...]` style lookups stay out of the hot path because
the server caches the per-version functions it uses.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from .apis import APIS, DATA
from .compiler import MessageCodec

if TYPE_CHECKING:
    from .schema import Api


@cache
def codec(api_key: int, kind: str) -> MessageCodec:
    api = APIS[api_key]
    return MessageCodec(api.request if kind == "request" else api.response)


@cache
def data_codec(name: str) -> MessageCodec:
    return MessageCodec(DATA[name])


def request_class(api_key: int) -> Any:
    return codec(api_key, "request").cls


def response_class(api_key: int) -> Any:
    return codec(api_key, "response").cls


def api(api_key: int) -> Api:
    return APIS[api_key]
