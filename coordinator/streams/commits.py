"""Who may commit offsets for a streams group (Kafka's StreamsGroup.validateOffsetCommit),
for OffsetCommit and TxnOffsetCommit alike: a member, with its current epoch (OffsetCommit
v9+); a commit from outside the group (no epoch: an admin tool) only while it is empty,
and a TxnOffsetCommit that names no member at all. While the group runs, an admin's
commit to a partition the group has paused (KIP-1249) is let through by the offset
handlers (`offsets.py`), as for consumer groups; any other partition is refused
UNKNOWN_MEMBER_ID.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from .model import StreamsGroup


def commit_error(group: StreamsGroup, member_id: str, epoch: int, version: int,
                 transactional: bool = False, instance_id: str | None = None) -> int:
    if epoch < 0 and not group.members:
        return ErrorCode.NONE  # an admin's commit, or a client outside the group
    if transactional and epoch == -1 and not member_id and instance_id is None:
        return ErrorCode.NONE  # TxnOffsetCommit names no member: nothing to check
    member = group.members.get(member_id)
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if not transactional and version < 9:
        return ErrorCode.UNSUPPORTED_VERSION  # members commit with OffsetCommit v9+
    if epoch != member.member_epoch:
        return ErrorCode.STALE_MEMBER_EPOCH
    return ErrorCode.NONE
