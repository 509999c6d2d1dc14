"""The image: small, non-root, no sources or build leftovers, no anonymous volume, a Kafka health check."""

from __future__ import annotations

import json

import pytest

from .conftest import BASE_IMAGE, REPORT, docker

pytestmark = pytest.mark.timeout(900)

MAX_OVER_BASE_MB = 80


def test_the_image_adds_less_than_80_mb_to_its_base(image: str) -> None:
    size = int(docker("image", "inspect", "-f", "{{.Size}}", image).stdout)
    base = int(docker("image", "inspect", "-f", "{{.Size}}", BASE_IMAGE).stdout)
    added_mb = (size - base) / 1e6
    REPORT["image size"] = f"{size / 1e6:.1f} MB, {added_mb:.1f} MB over {BASE_IMAGE}"
    assert added_mb < MAX_OVER_BASE_MB


def test_the_image_runs_as_a_user_without_volumes_and_checks_health_over_kafka(image: str) -> None:
    config = json.loads(docker("image", "inspect", "-f", "{{json .Config}}", image).stdout)
    assert config["User"] not in ("", "0", "root", "0:0")
    assert not config.get("Volumes"), "an anonymous volume is left behind by every run"
    health = config["Healthcheck"]
    assert health["Test"] == ["CMD", "kcsim", "health"]
    assert health["StartPeriod"] > 0
    assert config["Entrypoint"] == ["kcsim", "serve"]


def test_no_sources_wheels_or_pip_are_left_in_the_image(image: str) -> None:
    listing = docker(
        "run", "--rm", "--entrypoint", "sh", image, "-c",
        "id -u; ls -d /src /wheels 2>/dev/null; find / -xdev -name pyproject.toml 2>/dev/null; "
        "find /opt /data \\( -name '*.whl' -o -name pip -o -name 'pip[0-9]*' -o -name 'pip-*' \\)"
        " -print; true").stdout.split()
    uid, found = listing[0], listing[1:]
    assert uid != "0"
    assert found == []
