"""The compiled codec of every declared message, built lazily and cached.

`codec(api_key, "request")` gives the MessageCodec (classes + per-version
encode/decode); `REQUEST[...]` style lookups stay out of the hot path because
the server caches the per-version functions it uses. The classes are the static
ones of `protocol/messages`, imported one module at a time as codecs are built.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

from .apis import APIS, DATA, MODULE_OF
from .compiler import MessageCodec

if TYPE_CHECKING:
    from .schema import Api, Message


@cache
def codec(api_key: int, kind: str) -> MessageCodec:
    api = APIS[api_key]
    message = api.request if kind == "request" else api.response
    return MessageCodec(message, static_class(message))


@cache
def data_codec(name: str) -> MessageCodec:
    return MessageCodec(DATA[name], static_class(DATA[name]))


def static_class(message: Message) -> type:
    """The class `protocol/typegen.py` generated for `message`."""
    module = importlib.import_module(f"{__package__}.messages.{MODULE_OF[message.name]}")
    cls: type = getattr(module, message.name)
    return cls


def request_class(api_key: int) -> Any:
    return codec(api_key, "request").cls


def response_class(api_key: int) -> Any:
    return codec(api_key, "response").cls


def api(api_key: int) -> Api:
    return APIS[api_key]
