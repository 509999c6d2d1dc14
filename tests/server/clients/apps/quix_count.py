"""A quixstreams application counting messages per key, exactly once: the test runs it
as a process it can kill.

Usage: python quix_count.py BOOTSTRAP GROUP SOURCE SINK STATE_DIR
"""

from __future__ import annotations

import sys
import time
from typing import Any

from quixstreams import Application


def main() -> None:
    bootstrap, group, source, sink, state_dir = sys.argv[1:6]
    app = Application(broker_address=bootstrap, consumer_group=group,
                      processing_guarantee="exactly-once", state_dir=state_dir,
                      auto_offset_reset="earliest", commit_interval=0.2, loglevel="WARNING")
    counts = app.dataframe(app.topic(source, key_deserializer="str", value_deserializer="str"))

    def count(value: Any, state: Any) -> dict[str, int]:
        n = state.get("n", 0) + 1
        state.set("n", n)
        time.sleep(0.002)  # slow enough for the test to kill it half-way
        return {"count": n}

    counts.apply(count, stateful=True).to_topic(
        app.topic(sink, key_serializer="str", value_serializer="json"))
    app.run()


if __name__ == "__main__":
    main()
