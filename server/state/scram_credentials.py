"""SCRAM credentials: durable records, one per (user, mechanism), folded into a store.

A credential is what RFC 5802 has a server keep (salt, StoredKey, ServerKey, iterations),
as Kafka's UserScramCredentialRecord holds it; a tombstone removes it. They are written by
AlterUserScramCredentials and read back at start through the one `apply` path, and the
SCRAM mechanism looks them up when a client authenticates.
"""

from __future__ import annotations

from msgspec import Struct

from kcsim.protocol.scram import ScramCredential
from kcsim.storage.records import Record, RecordType


class ScramCredentialKey(Struct, frozen=True, array_like=True, gc=False):
    user: str
    mechanism: int  # the SCRAM mechanism's type: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512


class ScramCredentialValue(Struct, array_like=True, gc=False):
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


SCRAM_RECORD_TYPES: tuple[RecordType, ...] = (
    RecordType(40, "scram_credential", ScramCredentialKey, ScramCredentialValue),
)


class ScramCredentials:
    """Every user's SCRAM credentials, by user, then mechanism type."""

    def __init__(self) -> None:
        self._by_user: dict[str, dict[int, ScramCredential]] = {}

    def apply(self, record: Record) -> None:
        key: ScramCredentialKey = record.key
        value: ScramCredentialValue | None = record.value
        if value is None:
            mechanisms = self._by_user.get(key.user)
            if mechanisms is not None:
                mechanisms.pop(key.mechanism, None)
                if not mechanisms:
                    del self._by_user[key.user]
            return
        self._by_user.setdefault(key.user, {})[key.mechanism] = ScramCredential(
            value.salt, value.stored_key, value.server_key, value.iterations)

    def get(self, user: str, mechanism: int) -> ScramCredential | None:
        mechanisms = self._by_user.get(user)
        return None if mechanisms is None else mechanisms.get(mechanism)

    def of(self, user: str) -> dict[int, ScramCredential]:
        """A user's credentials by mechanism type (empty: none)."""
        return dict(sorted(self._by_user.get(user, {}).items()))

    def users(self) -> list[str]:
        return sorted(self._by_user)


def credential_record(user: str, mechanism: int, credential: ScramCredential | None) -> Record:
    """The record that sets (or, given None, removes) one credential."""
    value = None if credential is None else ScramCredentialValue(*credential)
    return Record(ScramCredentialKey(user, mechanism), value)
