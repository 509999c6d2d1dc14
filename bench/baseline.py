"""Another revision's kcsim, built once into `.cache/`, to measure beside this tree's.

`python -m bench --baseline REV` puts that kcsim where the floor usually stands. A
performance change is judged by the ratio of the two columns: both servers run in the
same harness, with the same load client, and the request-rate workloads alternate
between them in short slices, so a machine whose speed drifts during the run moves both
alike. Two separate runs of the bench cannot tell a 5% change from that drift.

A revision is exported with `git archive` and installed with pip into its own folder
(`.cache/bench-baseline/<commit>/`), which `kcsim serve` of that revision finds first on
its `PYTHONPATH`; the dependencies stay this venv's. A revision from before kcsim's
folders were installed through the package-directory mapping has a `kcsim/` package of
links in its tree, and runs from its source as it is.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from .servers import ROOT

CACHE = ROOT / ".cache" / "bench-baseline"


class BaselineError(Exception):
    """The revision could not be found or built."""


@dataclass(frozen=True)
class Baseline:
    """A built revision: `path` goes first on the server's PYTHONPATH."""

    revision: str  # as given on the command line
    commit: str
    path: Path

    @property
    def label(self) -> str:
        return f"kcsim at {self.revision}"


def prepare(revision: str) -> Baseline:
    """The kcsim of `revision`, built on first use."""
    commit = _git("rev-parse", "--verify", f"{revision}^{{commit}}").decode().strip()
    home = CACHE / commit
    for path in (home / "site", home / "src"):
        if (path / "kcsim" / "__main__.py").exists():
            return Baseline(revision, commit, path)
    shutil.rmtree(home, ignore_errors=True)
    src = home / "src"
    src.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(_git("archive", commit))) as tar:
        tar.extractall(src, filter="tar")
    if (src / "kcsim" / "__main__.py").exists():
        return Baseline(revision, commit, src)
    site = home / "site"
    built = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                            "--target", str(site), str(src)], capture_output=True, text=True,
                           check=False)
    if built.returncode != 0:
        shutil.rmtree(home, ignore_errors=True)
        raise BaselineError(f"pip could not build {revision} ({commit[:12]}):\n"
                            f"{built.stderr.strip()[-2000:]}")
    return Baseline(revision, commit, site)


def _git(*args: str) -> bytes:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, check=False)
    if done.returncode != 0:
        raise BaselineError(f"git {' '.join(args)}: {done.stderr.decode().strip()}")
    return done.stdout
