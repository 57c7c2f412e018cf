"""HA-free client library for Pacerelle: protocol, gateway and end-to-end encryption."""

from .agent.agent import Agent
from .agent.opening import (
    AgentHost,
    Opening,
    install_agent,
    open_agent,
)
from .agent.views import AgentStatus, AgentSummary
from .agent_core import AgentConfig, AgentHooks, ConnectionState
from .attachments import OutgoingFile
from .conversations.seen import SeenConversation
from .errors import (
    ErrorKind,
    PacerelleApiError,
    PacerelleError,
    SendError,
    SendRefusal,
)
from .limits import BOUNDS
from .relay.agent_connect import AgentConnect, Installation
from .relay.frames import is_relay_id
from .signal.native import native_crypto_unavailable
from .state.agent_store import AgentStore, AgentStores, StoreLocation
from .state.errors import StoreError, StoreProblem
from .trust.door import TrustDoor, TrustListener
from .values.checkpoints import CheckpointStatus
from .values.decrypt_failures import DecryptFailures, DecryptionOutcome, DeviceKey
from .values.history import Reply
from .values.question import Question
from .values.requests import Request
from .values.trust_book import (
    DeviceTrust,
    KeyChangedError,
    TrustBook,
    TrustState,
)
from .values.widget_answers import WidgetResponse
from .values.widgets import (
    ASKABLE_KINDS,
    DATETIME_MODES,
    RESPONSE_MODES,
    WidgetError,
    build_widget,
    check_widget,
)

__all__ = [
    "ASKABLE_KINDS",
    "BOUNDS",
    "DATETIME_MODES",
    "RESPONSE_MODES",
    "Agent",
    "AgentConfig",
    "AgentConnect",
    "AgentHooks",
    "AgentHost",
    "AgentStatus",
    "AgentStore",
    "AgentStores",
    "AgentSummary",
    "CheckpointStatus",
    "ConnectionState",
    "DecryptFailures",
    "DecryptionOutcome",
    "DeviceKey",
    "DeviceTrust",
    "ErrorKind",
    "Installation",
    "KeyChangedError",
    "Opening",
    "OutgoingFile",
    "PacerelleApiError",
    "PacerelleError",
    "Question",
    "Reply",
    "Request",
    "SeenConversation",
    "SendError",
    "SendRefusal",
    "StoreError",
    "StoreLocation",
    "StoreProblem",
    "TrustBook",
    "TrustDoor",
    "TrustListener",
    "TrustState",
    "WidgetError",
    "WidgetResponse",
    "build_widget",
    "check_widget",
    "install_agent",
    "is_relay_id",
    "native_crypto_unavailable",
    "open_agent",
]
