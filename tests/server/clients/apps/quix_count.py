"""A quixstreams application counting messages per key, exactly once: the test runs it
as a process it can kill.

Usage: python quix_count.py BOOTSTRAP GROUP SOURCE SINK STATE_DIR [HOLD_AFTER]

With HOLD_AFTER, the application stops in the middle of its transaction once it has
counted that many messages, and stays there until it is killed: the kill then lands
half-way however fast the machine is.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from quixstreams import Application


def main() -> None:
    bootstrap, group, source, sink, state_dir = sys.argv[1:6]
    hold_after = int(sys.argv[6]) if len(sys.argv) > 6 else None
    seen = 0
    app = Application(broker_address=bootstrap, consumer_group=group,
                      processing_guarantee="exactly-once", state_dir=state_dir,
                      auto_offset_reset="earliest", commit_interval=0.2, loglevel="WARNING")
    counts = app.dataframe(app.topic(source, key_deserializer="str", value_deserializer="str"))

    def count(value: Any, state: Any) -> dict[str, int]:
        nonlocal seen
        seen += 1
        while hold_after is not None and seen > hold_after:
            time.sleep(1)  # held mid-transaction until the test kills the process
        n = state.get("n", 0) + 1
        state.set("n", n)
        time.sleep(0.002)  # so that transactions commit (every 0.2 s) before the hold
        return {"count": n}

    counts.apply(count, stateful=True).to_topic(
        app.topic(sink, key_serializer="str", value_serializer="json"))
    app.run()


if __name__ == "__main__":
    main()
