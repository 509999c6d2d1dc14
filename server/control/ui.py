"""The live group page (`GET /ui`): one HTML file with its script and style inline, no
build step. It reads the control API itself: /state/groups, /state/paused and /state/lag
for the groups, /events/stream for the timeline, and reads the state again at each event
and every second (lag moves with produces, which are no events)."""

from __future__ import annotations

import functools
from importlib import resources

from .http_app import Page


@functools.cache
def ui_page() -> Page:
    body = resources.files(__package__).joinpath("ui.html").read_bytes()
    return Page(body, "text/html; charset=utf-8")
