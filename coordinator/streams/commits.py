"""Who may commit offsets for a streams group (Kafka's StreamsGroup.validateOffsetCommit),
for OffsetCommit and TxnOffsetCommit alike: a member, with its current epoch; a commit
from outside the group (no member id, no epoch: an admin tool) only while it is empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from .model import StreamsGroup


def commit_error(group: StreamsGroup, member_id: str, epoch: int) -> int:
    if epoch < 0 and not member_id and not group.members:
        return ErrorCode.NONE
    member = group.members.get(member_id)
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if epoch != member.member_epoch:
        return ErrorCode.STALE_MEMBER_EPOCH
    return ErrorCode.NONE
