"""The ``spark`` extra: what the pipeline imports beyond kcsim's own dependencies.

kcsim installs without it, and ``kcsim --help`` lists ``kcsim pipeline`` all the
same (nothing here imports Spark). So the ways in, the command and
``spark_session()``, check for it first and name the extra to install, where an
import deep inside a job would only name one missing module.
"""

from __future__ import annotations

import importlib.util

INSTALL = "pip install 'kcsim[spark]'"
# The import names of the extra's distributions (pyproject.toml, [spark]).
MODULES = ("pyspark", "pyarrow", "pandas", "cramjam", "lz4", "zstandard", "plotly")


def require_spark() -> None:
    """Raise ImportError naming the extra when any of its modules is not installed."""
    missing = [name for name in MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(f"kcsim's pipeline needs the spark extra, and {', '.join(missing)} "
                          f"{'is' if len(missing) == 1 else 'are'} not installed: {INSTALL}")
