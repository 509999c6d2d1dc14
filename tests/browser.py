"""Where the tests find a browser: Debian's chromium, or the test is skipped saying so."""

from __future__ import annotations

import shutil

import pytest


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("NO BROWSER: this test needs Debian's chromium "
                "(apt-get install -y chromium); .ci/run installs it")
