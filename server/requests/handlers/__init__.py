"""One module per API family; each registers its handlers with `dispatch.serves`."""

from __future__ import annotations

import functools
import importlib
import pkgutil

from ..dispatch import ROUTES, Route


@functools.cache
def load_handlers() -> dict[int, Route]:
    """Import every handler module so its routes register; returns the table (the modules
    are listed once per process, not for every broker built)."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        importlib.import_module(f"{__name__}.{info.name}")
    return ROUTES
