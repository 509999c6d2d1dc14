"""The command's tests use the admin tests' broker and topics."""

from ..admin.conftest import bootstrap, streams_server, topic

__all__ = ["bootstrap", "streams_server", "topic"]
