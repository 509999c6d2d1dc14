"""What kcsim installs as: the folders mapped to kcsim's subpackages, and a wheel that
works without the test tools."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
FOLDERS: dict[str, str] = SETUPTOOLS["package-dir"]  # kcsim.server -> server, ...


def _packages_in_the_tree() -> set[str]:
    found = set()
    for name, folder in FOLDERS.items():
        for path, dirs, files in os.walk(REPO / folder):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            if "__init__.py" in files:
                sub = Path(path).relative_to(REPO / folder).parts
                found.add(".".join((name, *sub)))
    return found


def test_every_folder_with_an_init_is_a_listed_package() -> None:
    listed = set(SETUPTOOLS["packages"])
    assert not _packages_in_the_tree() - listed, (
        "add these to [tool.setuptools] packages in pyproject.toml, or they are not installed")
    assert not listed - _packages_in_the_tree(), "listed in pyproject.toml, but no such folder"


def test_the_package_folders_hold_no_links() -> None:
    links = [str(Path(path, entry).relative_to(REPO))
             for folder in FOLDERS.values()
             for path, dirs, files in os.walk(REPO / folder)
             for entry in dirs + files if os.path.islink(os.path.join(path, entry))]
    assert links == []


# What pip prints when it cannot reach a package index at all.
_UNREACHABLE = ("Failed to establish a new connection", "Temporary failure in name resolution",
                "Network is unreachable", "No matching distribution found")


def _run(*cmd: str | Path, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={k: v for k, v in os.environ.items()
                                            if k not in ("PYTHONPATH", "VIRTUAL_ENV")})
    if check and proc.returncode != 0:
        output = proc.stdout + proc.stderr
        if any(s in output for s in _UNREACHABLE):
            pytest.skip(f"pip cannot reach a package index:\n{output[-1500:]}")
        raise AssertionError(f"{cmd} exited with {proc.returncode}:\n{output[-4000:]}")
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", out, REPO, cwd=out)
    (built,) = out.glob("kcsim-*.whl")
    return built


@pytest.fixture(scope="module")
def bare_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel and its runtime dependencies: no pytest."""
    home = tmp_path_factory.mktemp("venv")
    venv.create(home, with_pip=True)
    _run(home / "bin" / "python", "-m", "pip", "install", "--quiet", wheel, cwd=home)
    return home


@pytest.mark.slow
def test_the_wheel_holds_the_folders_as_kcsim_subpackages(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        entries = archive.infolist()
    names = {e.filename for e in entries}
    for package in SETUPTOOLS["packages"]:
        assert f"{package.replace('.', '/')}/__init__.py" in names
    assert {"kcsim/server/cli.py", "kcsim/coordinator/groups/state.py", "kcsim/testing.py",
            "kcsim/py.typed", "kcsim/server/control/ui.html"} <= names
    assert not [n for n in names if not n.startswith(("kcsim/", "kcsim-"))]
    assert not [e.filename for e in entries if stat.S_ISLNK(e.external_attr >> 16)]


@pytest.mark.slow
def test_the_public_face_works_where_pytest_is_not_installed(bare_venv: Path) -> None:
    python = bare_venv / "bin" / "python"
    code = ("import importlib.util, kcsim.testing, kcsim, kcsim.server.cli;"
            "assert importlib.util.find_spec('pytest') is None, 'pytest is installed';"
            "server = kcsim.EmbeddedServer().start(); print(server.bootstrap); server.stop()")
    out = _run(python, "-c", code, cwd=bare_venv).stdout
    assert out.startswith("127.0.0.1:")
    fixture = _run(python, "-c", "import kcsim.testing; kcsim.testing.kcsim", cwd=bare_venv,
                   check=False)
    assert fixture.returncode != 0
    assert "kcsim.testing.kcsim is a pytest fixture: it needs pytest" in fixture.stderr


@pytest.mark.slow
def test_the_optional_extras_name_what_to_install(bare_venv: Path) -> None:
    python, kcsim = bare_venv / "bin" / "python", bare_venv / "bin" / "kcsim"
    containers = _run(python, "-c", "import kcsim.testcontainers", cwd=bare_venv, check=False)
    assert containers.returncode != 0
    assert "pip install 'kcsim[testcontainers]'" in containers.stderr
    assert "pipeline" in _run(kcsim, "--help", cwd=bare_venv).stdout
    pipeline = _run(kcsim, "pipeline", "report", "--data-dir", bare_venv, "--out",
                    bare_venv / "report", cwd=bare_venv, check=False)
    assert pipeline.returncode == 2
    assert "pip install 'kcsim[spark]'" in pipeline.stderr
    assert "Traceback" not in pipeline.stderr
