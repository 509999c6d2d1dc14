"""A progress bar on stderr for long runs over many groups or partitions.

Shown only when stderr is a terminal and the work is long enough to be worth it;
piped or redirected runs stay quiet. rich is optional: without it there is no bar.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

T = TypeVar("T")

MIN_ITEMS = 10


def show_progress(steps: int, work: int) -> bool:
    """Worth a bar: several steps over many groups or partitions, on a terminal."""
    return steps > 1 and work >= MIN_ITEMS and sys.stderr.isatty()


def tracked(items: Sequence[T], description: str, work: int | None = None) -> Iterator[T]:
    """Iterate `items`, advancing a bar (when shown) as each one is done. `work` is how many
    groups or partitions they stand for (default: one each)."""
    total = len(items)
    if not show_progress(total, total if work is None else work):
        yield from items
        return
    try:
        from rich.console import Console
        from rich.progress import Progress
    except ImportError:
        yield from items
        return
    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(description, total=total)
        for item in items:
            yield item
            progress.advance(task)


def chunks(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
