"""The request layer: one request frame in, one answer out, with no sockets.

`Dispatcher.process` (`dispatcher`) decodes a frame, checks its version once against
the route table (`routes`, filled by `handlers`), applies the fault rules tests
installed, calls the handler with the broker state, encodes its answer and logs it;
it returns an `Answer` (`reply`): the frame alone, or a `Reply` with named fields
when records must be durable first, parked requests are released, the answer is
pending or the connection closes. Plans, with the answer cache of read-only APIs,
are in `plans`; Kafka-shaped error answers for every API are the protocol's
(`kcsim.protocol.error_answers`).

Before a connection on a SASL listener has authenticated, its frames go to its
`Authenticator` (`authenticator`, made by `start_authentication`) instead; an authenticated
connection whose session expires (KIP-368) is served through its `Session`, which takes its
re-authentications and closes it once expired.

This module is the face the shell imports; the rest of the room is its own.
"""

from .authenticator import Close, Session
from .authenticator import start as start_authentication
from .context import Peer
from .dispatcher import Dispatcher, ProtocolViolation
from .reply import Answer, Reply, withdraw

__all__ = ["Answer", "Close", "Dispatcher", "Peer", "ProtocolViolation", "Reply", "Session", "start_authentication", "withdraw"]
