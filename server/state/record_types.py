"""The record types a data directory's log holds: the coordinator's and the broker's.

The one place that says what ``<data-dir>/meta`` may contain. The server opens
its log with it (``durability``) and the Spark pipeline decodes with it, so both
read the log through the same codecs. It imports no I/O.
"""

from __future__ import annotations

from kcsim.coordinator.records import COORDINATOR_RECORD_TYPES
from kcsim.storage.records import RecordTypes

from ..acl.records import ACL_RECORD_TYPES
from .config_records import BROKER_CONFIG_RECORD_TYPES
from .scram_credentials import SCRAM_RECORD_TYPES
from .topic_records import TOPIC_RECORD_TYPES

RECORD_TYPES = RecordTypes(COORDINATOR_RECORD_TYPES + TOPIC_RECORD_TYPES
                           + BROKER_CONFIG_RECORD_TYPES + SCRAM_RECORD_TYPES
                           + ACL_RECORD_TYPES)
