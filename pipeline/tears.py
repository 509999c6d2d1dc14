"""Finding torn tails before a job, so the command line can say where reading stops.

Only the newest segment of a log can have a torn tail (everything before it
was complete when the next segment began), so this reads the record log's
last segment and each partition's last segment, judged as the readers judge
them. Damage elsewhere is left to the job, which fails on it as a server's
start-up would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .meta_log import SegmentRead, judged, plan_segments, topic_names
from .partition_data import plan_partition_segments, read_partition_segment

if TYPE_CHECKING:
    import os

    from .meta_log import Tear


def find_tears(data_dir: str | os.PathLike[str]) -> list[Tear]:
    tears = []
    segments = plan_segments(data_dir)
    if segments:
        read = SegmentRead(segments[-1])
        judged(segments[-1], read)
        if read.tear is not None:
            tears.append(read.tear)
    for segment in plan_partition_segments(data_dir, topic_names(data_dir)):
        if segment.is_last:
            _found, tear = read_partition_segment(segment)
            if tear is not None:
                tears.append(tear)
    return tears
