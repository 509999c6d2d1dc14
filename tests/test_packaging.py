"""What kcsim installs as: the folders mapped to kcsim's subpackages."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tomllib
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


@pytest.mark.slow
def test_the_wheel_holds_the_folders_as_kcsim_subpackages(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        entries = archive.infolist()
    names = {e.filename for e in entries}
    for package in SETUPTOOLS["packages"]:
        assert f"{package.replace('.', '/')}/__init__.py" in names
    assert {"kcsim/server/cli.py", "kcsim/coordinator/groups/state.py", "kcsim/testing.py",
            "kcsim/py.typed"} <= names
    assert not [n for n in names if not n.startswith(("kcsim/", "kcsim-"))]
    assert not [e.filename for e in entries if stat.S_ISLNK(e.external_attr >> 16)]
