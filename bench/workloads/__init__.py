"""Workload modules: each registers itself with `bench.registry.workload` on import.

Adding a workload is adding a module here; `load()` imports them all.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..registry import WORKLOADS, Workload


def load() -> dict[str, Workload]:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        importlib.import_module(f"{__name__}.{info.name}")
    ordered = sorted(WORKLOADS.values(), key=lambda w: (w.order, w.name))
    return {w.name: w for w in ordered}
