"""SASL users as tests make and remove them (`kcsim.testing`, `/users` of the HTTP API).

A SCRAM user is what AlterUserScramCredentials makes: a durable credential record (salt,
StoredKey, ServerKey, iterations; never the password), applied to the broker's state and
handed to the log as an answer's records are, kept over a restart. A PLAIN user is a setting, as
`--sasl-plain-users` (Kafka's JAAS `user_NAME="PASSWORD"`): it lasts until the broker
stops. Each takes effect at the next authentication; a connection already authenticated
keeps its session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.protocol.scram import BY_TYPE, MAX_ITERATIONS, make_credential
from kcsim.protocol.scram import MECHANISMS as SCRAM_MECHANISMS

from ..state.scram_credentials import credential_record

if TYPE_CHECKING:
    from collections.abc import Callable, MutableMapping

    from kcsim.storage import Record

    from ..state.scram_credentials import ScramCredentials

PLAIN = "PLAIN"
MECHANISMS = (PLAIN, *SCRAM_MECHANISMS)


class Users:
    """The users of one broker: PLAIN's (a mapping the authenticator reads) and SCRAM's
    (credentials, changed through `record`: apply and make durable)."""

    def __init__(self, plain: MutableMapping[str, str], scram: ScramCredentials,
                 record: Callable[[list[Record]], None]) -> None:
        self._plain = plain
        self._scram = scram
        self._record = record

    def add(self, name: str, password: str, mechanism: str = "SCRAM-SHA-512",
            iterations: int = 4096) -> None:
        """Make `name` a user of `mechanism` with `password` (replacing what it had)."""
        mechanism = mechanism.upper()
        if not name:
            raise ValueError("name: must not be empty")
        if not password:
            raise ValueError("password: must not be empty")
        if mechanism == PLAIN:
            self._plain[name] = password
            return
        scram = SCRAM_MECHANISMS.get(mechanism)
        if scram is None:
            raise ValueError(f"mechanism: expected one of {', '.join(MECHANISMS)}, "
                             f"got {mechanism!r}")
        if not scram.min_iterations <= iterations <= MAX_ITERATIONS:
            raise ValueError(f"iterations: {mechanism} takes {scram.min_iterations} to "
                             f"{MAX_ITERATIONS}, got {iterations}")
        self._record([credential_record(name, scram.type,
                                        make_credential(scram, password, iterations))])

    def remove(self, name: str, mechanism: str | None = None) -> list[str]:
        """Remove `name`'s `mechanism` (None: every one it has); the mechanisms removed."""
        wanted = MECHANISMS if mechanism is None else (mechanism.upper(),)
        removed = []
        if PLAIN in wanted and self._plain.pop(name, None) is not None:
            removed.append(PLAIN)
        records = [credential_record(name, kind, None) for kind in self._scram.of(name)
                   if BY_TYPE[kind].name in wanted]
        if records:
            self._record(records)
            removed += [BY_TYPE[r.key.mechanism].name for r in records]
        return removed

    def list(self) -> dict[str, list[str]]:
        """Every user, with the mechanisms it may authenticate with."""
        users: dict[str, list[str]] = {name: [PLAIN] for name in self._plain}
        for name in self._scram.users():
            users.setdefault(name, []).extend(BY_TYPE[kind].name for kind in self._scram.of(name))
        return dict(sorted(users.items()))
