"""Transaction states, Kafka's allowed transitions, and what each request does in each state.

The tables are the rules: a transition not listed is a bug and raises, and each
request's behaviour per state is looked up rather than spread over branches
(as `coordinator/groups/state.py` does for groups).
"""

from __future__ import annotations

from enum import Enum


class TxnState(Enum):
    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"
    DEAD = "Dead"


S = TxnState
_AT_REST = frozenset({S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT})

# The states each state may be entered from (Kafka's TransactionState.validPreviousStates).
ALLOWED_FROM: dict[TxnState, frozenset[TxnState]] = {
    S.EMPTY: _AT_REST,
    S.ONGOING: _AT_REST | {S.ONGOING},
    S.PREPARE_COMMIT: frozenset({S.ONGOING}),
    S.PREPARE_ABORT: _AT_REST | {S.ONGOING, S.PREPARE_EPOCH_FENCE},
    S.COMPLETE_COMMIT: frozenset({S.PREPARE_COMMIT}),
    S.COMPLETE_ABORT: frozenset({S.PREPARE_ABORT}),
    S.PREPARE_EPOCH_FENCE: frozenset({S.ONGOING}),
    S.DEAD: _AT_REST,
}

PREPARING = frozenset({S.PREPARE_COMMIT, S.PREPARE_ABORT, S.PREPARE_EPOCH_FENCE})


class IllegalTransition(RuntimeError):
    """A transition Kafka's table does not allow: a bug in the coordinator."""


def check_transition(old: TxnState, new: TxnState) -> None:
    if old not in ALLOWED_FROM[new]:
        raise IllegalTransition(f"transaction cannot go from {old.value} to {new.value}")


class Init(Enum):
    """What InitProducerId does to an existing transactional id."""

    BUMP = "bump the epoch"
    FENCE = "abort the open transaction with a bumped epoch"
    RETRY = "CONCURRENT_TRANSACTIONS: a transaction is completing"


class Add(Enum):
    """What AddPartitionsToTxn / AddOffsetsToTxn do."""

    ADD = "add to the transaction (it is then Ongoing)"
    RETRY = "CONCURRENT_TRANSACTIONS: a transaction is completing"


class End(Enum):
    """What EndTxn does, by state and by whether it asks to commit."""

    END = "prepare, write the markers, complete"
    BUMP = "an abort with nothing added: bump the epoch, no marker (transactions v2)"
    DONE = "a retry of the end that already completed: success"
    RETRY = "CONCURRENT_TRANSACTIONS: a transaction is completing"
    INVALID = "INVALID_TXN_STATE"


INIT_RULES: dict[TxnState, Init] = {
    S.EMPTY: Init.BUMP,
    S.COMPLETE_COMMIT: Init.BUMP,
    S.COMPLETE_ABORT: Init.BUMP,
    S.ONGOING: Init.FENCE,
    S.PREPARE_COMMIT: Init.RETRY,
    S.PREPARE_ABORT: Init.RETRY,
    S.PREPARE_EPOCH_FENCE: Init.RETRY,
}

ADD_RULES: dict[TxnState, Add] = {
    S.EMPTY: Add.ADD,
    S.ONGOING: Add.ADD,
    S.COMPLETE_COMMIT: Add.ADD,
    S.COMPLETE_ABORT: Add.ADD,
    S.PREPARE_COMMIT: Add.RETRY,
    S.PREPARE_ABORT: Add.RETRY,
    S.PREPARE_EPOCH_FENCE: Add.RETRY,
}

# (state, committed) -> what EndTxn does
END_RULES: dict[tuple[TxnState, bool], End] = {
    (S.ONGOING, True): End.END,
    (S.ONGOING, False): End.END,
    (S.PREPARE_COMMIT, True): End.RETRY,
    (S.PREPARE_COMMIT, False): End.INVALID,
    (S.PREPARE_ABORT, True): End.INVALID,
    (S.PREPARE_ABORT, False): End.RETRY,
    (S.COMPLETE_COMMIT, True): End.DONE,
    (S.COMPLETE_COMMIT, False): End.INVALID,
    (S.COMPLETE_ABORT, True): End.INVALID,
    (S.COMPLETE_ABORT, False): End.DONE,
    (S.EMPTY, True): End.INVALID,
    (S.EMPTY, False): End.INVALID,
    (S.PREPARE_EPOCH_FENCE, True): End.INVALID,
    (S.PREPARE_EPOCH_FENCE, False): End.RETRY,
}

# KIP-890 part 2 (EndTxn v5+): every end bumps the epoch, so the same epoch as a completed
# transaction's is the next transaction's end, and the epoch just before it a retry of the
# end that completed. (state, committed, retry) -> what EndTxn does (Kafka's
# endTransaction above transaction version 2).
END_V2_RULES: dict[tuple[TxnState, bool, bool], End] = {
    **{(S.ONGOING, c, r): End.END for c in (True, False) for r in (True, False)},
    **{(S.EMPTY, True, r): End.INVALID for r in (True, False)},
    **{(S.EMPTY, False, r): End.BUMP for r in (True, False)},
    (S.COMPLETE_COMMIT, True, True): End.DONE,
    (S.COMPLETE_COMMIT, True, False): End.INVALID,
    (S.COMPLETE_COMMIT, False, True): End.INVALID,
    (S.COMPLETE_COMMIT, False, False): End.BUMP,
    (S.COMPLETE_ABORT, False, True): End.DONE,
    (S.COMPLETE_ABORT, False, False): End.BUMP,
    **{(S.COMPLETE_ABORT, True, r): End.INVALID for r in (True, False)},
    **{(state, committed, r): does for (state, committed), does in END_RULES.items()
       if state in PREPARING for r in (True, False)},
}
