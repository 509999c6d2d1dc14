"""Every declared API has an error answer, at every version it is served: a handler that
raises, or a fault rule's error, is answered rather than closing the connection."""

from __future__ import annotations

import pytest

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec
from kcsim.protocol.error_answers import error_answer
from kcsim.protocol.errors import ErrorCode

CASES = [(key, version) for key, api in sorted(APIS.items())
         for version in range(api.min_version, api.max_version + 1)]


@pytest.mark.parametrize(("api_key", "version"), CASES)
def test_every_api_has_an_error_answer_that_encodes(api_key: int, version: int) -> None:
    request_codec, response_codec = codec(api_key, "request"), codec(api_key, "response")
    request = request_codec.decode(request_codec.encode(request_codec.cls(), version), version)
    answer = error_answer(api_key, version, request, ErrorCode.UNKNOWN_SERVER_ERROR)
    assert isinstance(answer, response_codec.cls)
    decoded = response_codec.decode(response_codec.encode(answer, version), version)
    assert decoded == response_codec.decode(response_codec.encode(decoded, version), version)
