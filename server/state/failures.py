"""One line per bug a coordinator contained: the shell's ticks, the group handlers and the
ends of transactions all report the Outcome's `failures` this way."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kcsim.coordinator import Failure

log = logging.getLogger("kcsim.coordinator")


def log_failures(failures: list[Failure], source: str = "") -> None:
    """One line per bug the coordinator contained (traceback at debug level)."""
    for failure in failures:
        if failure.group_id is None:
            log.error("%s %s failed: %s: %s; answered UNKNOWN_SERVER_ERROR", failure.what,
                      source, type(failure.error).__name__, failure.error)
        else:
            log.error("group %r failed (%s: %s: %s); its requests now get "
                      "COORDINATOR_NOT_AVAILABLE", failure.group_id, failure.what,
                      type(failure.error).__name__, failure.error)
        log.debug("contained failure", exc_info=failure.error)
