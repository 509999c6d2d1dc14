"""The command's tests use the admin tests' broker and topics."""

from ..admin.conftest import bootstrap, topic

__all__ = ["bootstrap", "topic"]
