"""The public face of kcsim: the names users import stay where the docs say they are."""

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any

import pytest

PUBLIC = {
    "kcsim": ["Config", "EmbeddedServer", "load_config"],
    "kcsim.admin": ["AdminClient", "AdminError", "OffsetSpec", "Outcomes", "TopicPartition",
                    "TrioAdminClient"],
    "kcsim.testing": ["EmbeddedServer", "FaultRule", "FaultStatus", "GroupEventValue",
                      "GroupView", "LagView", "MemberView", "RequestRecord", "TrioKcsim", "WaitTimeout", "kcsim",
                      "kcsim_embedded_factory", "kcsim_persistent", "kcsim_trio",
                      "open_trio_kcsim"],
    "kcsim.testcontainers": ["KcsimContainer"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_documented_names_are_exported(module: str) -> None:
    mod = importlib.import_module(module)
    exported = set(mod.__all__)
    for name in PUBLIC[module]:
        assert name in exported, f"{module}.{name} is documented but not in __all__"
    for name in exported:
        assert getattr(mod, name) is not None, f"{module}.{name} does not resolve"


def test_unknown_names_raise_attribute_error() -> None:
    import kcsim

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = kcsim.Nope  # type: ignore[attr-defined]


def test_importing_kcsim_is_cheap_and_uses_only_the_kcsim_name() -> None:
    """`import kcsim` loads no server code, and nothing is imported under the folders'
    own names (protocol, storage, ...), which would collide with other distributions."""
    code = (
        "import sys, kcsim; heavy = [m for m in sys.modules if m.startswith('kcsim.')];"
        "from kcsim.server.app import build; from kcsim.admin import AdminClient;"
        "import kcsim.tools.consumer_groups;"
        "bare = [m for m in sys.modules if m.split('.')[0] in "
        "('protocol', 'storage', 'coordinator', 'server', 'admin', 'tools')];"
        "print(heavy, bare)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd="/").stdout.strip()
    assert out == "[] []"


def test_testcontainers_without_its_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "kcsim.testcontainers", raising=False)
    monkeypatch.setitem(sys.modules, "testcontainers.core.container", None)
    with pytest.raises(ImportError, match=r"pip install 'kcsim\[testcontainers\]'"):
        importlib.import_module("kcsim.testcontainers")


@pytest.mark.parametrize("command", ["report", "compact"])
def test_the_pipeline_command_without_spark_names_the_extra(
        command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
        capsys: pytest.CaptureFixture[str]) -> None:
    from kcsim.server.cli import main

    monkeypatch.setitem(sys.modules, "pyspark", None)
    code = main(["pipeline", command, "--data-dir", str(tmp_path), "--out", str(tmp_path / "o")])
    assert code == 2
    assert "pip install 'kcsim[spark]'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_spark_session_without_spark_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from kcsim.pipeline.session import spark_session

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r"pyarrow.* not installed: pip install 'kcsim\[spark\]'"):
        spark_session()
