"""How a KIP-848 or KIP-1071 heartbeat is refused: every check that can fail runs before
the first record is written and raises `Refused`, which the handler turns into its
error answer, so a refused heartbeat changes nothing."""

from __future__ import annotations

from kcsim.protocol.errors import ErrorCode


class Refused(Exception):
    """The request fails with this error before anything is written."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message


def not_blank(value: str | None, message: str) -> None:
    """Kafka's throwIfEmptyString: a given string must not be blank (INVALID_REQUEST)."""
    if value is not None and not value.strip():
        raise Refused(ErrorCode.INVALID_REQUEST, message)
