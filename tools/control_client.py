"""A client of kcsim's HTTP control API (docs/control-http.md) on the standard library.

It knows nothing of kcsim's code, only the API's paths and JSON, like a test in
another language would: `kcsim control` uses it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

DEFAULT_HTTP_TIMEOUT_S = 30.0


class ControlError(Exception):
    """The API refused (`status` is the HTTP status, `body` its JSON) or could not be reached
    (`status` is None)."""

    def __init__(self, message: str, status: int | None = None,
                 body: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body or {}


class ControlClient:
    def __init__(self, url: str, timeout: float = DEFAULT_HTTP_TIMEOUT_S) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"expected a URL like http://127.0.0.1:9644, got {url!r}")
        self.url = url.rstrip("/")
        self.timeout = timeout

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             query: dict[str, Any] | None = None, wait_s: float = 0.0) -> Any:
        """One request; the answer's JSON. `wait_s` is how long the server may take on
        purpose (a wait), added to the HTTP time-out."""
        given = {k: v for k, v in (query or {}).items() if v is not None}
        url = self.url + path + ("?" + urllib.parse.urlencode(given, doseq=True) if given else "")
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method,
                                         headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout + wait_s) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = {"error": raw.decode(errors="replace").strip() or exc.reason}
            if not isinstance(parsed, dict):
                parsed = {"error": str(parsed)}
            raise ControlError(f"HTTP {exc.code}: {parsed.get('error', exc.reason)}",
                               exc.code, parsed) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ControlError(f"cannot reach {self.url}: {reason}") from None
