"""The Vis content-block contract: its JSON Schemas and the checks built from them."""

from vis_export.contract.blocktypes import KNOWN_TYPES as BLOCK_TYPES
from vis_export.contract.check import (
    MAX_DEPTH,
    MAX_TIME,
    MESSAGE_ROLES,
    MESSAGE_STATUSES,
    check_block,
    check_depth,
    check_event,
    check_message,
    check_session,
)

__all__ = [
    "BLOCK_TYPES",
    "MAX_DEPTH",
    "MAX_TIME",
    "MESSAGE_ROLES",
    "MESSAGE_STATUSES",
    "check_block",
    "check_depth",
    "check_event",
    "check_message",
    "check_session",
]
