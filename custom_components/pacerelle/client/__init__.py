"""HA-free client library for Pacerelle: protocol, gateway and end-to-end encryption."""

from .agent.agent import Agent
from .agent.opening import AgentHost, Opening, install_agent, open_agent
from .agent.views import AgentStatus, AgentSummary, SessionSummary
from .agent_core import AgentConfig, AgentHooks, ConnectionState
from .attachments import OutgoingFile
from .conversations.membership import Member, MemberDevice
from .conversations.seen import SeenConversation
from .crypto_jobs import MissingGroupKeyError, UntrustedGroupKeysError
from .encrypted_file import DocumentTooLargeError, EncryptedFile, StoreError, StoreProblem
from .errors import (
    PacerelleApiError,
    PacerelleAuthError,
    PacerelleConnectionError,
    PacerelleError,
    PacerelleResponseError,
    SendError,
    SendRefusal,
)
from .limits import (
    MAX_AGENT_DESCRIPTION,
    MAX_AGENT_NAME,
    MAX_CHECKPOINT_LABEL_CHARS,
    MAX_CHECKPOINT_TEXT_CHARS,
    MAX_EXPIRE_AFTER,
    MAX_FILE_BYTES,
    MAX_FILES_PER_SEND,
    MAX_HANDED_OVER,
    MAX_HISTORY_ENTRIES,
    MAX_NOTE_CHARS,
    MAX_QUEUED_SEND_BYTES,
    MAX_QUEUED_SENDS,
    MAX_SEND_TEXT_CHARS,
)
from .relay.agent_connect import (
    AuthorizationRequest,
    Installation,
    begin,
    exchange_code,
    normalize_server_url,
    register_client,
    request_runtime_token,
)
from .relay.frames import FrameError, group_recipient, is_group_recipient, is_relay_id
from .relay.http import ResponseTooLargeError
from .relay.tokens import InstallationRevokedError, IssuedToken, RuntimeTokens
from .signal.native import native_crypto_unavailable
from .state.agent_store import AgentStore, AgentStores, StoreLocation
from .state.versions import STORE_VERSION, migrate, versioned
from .trust.door import TrustDoor, TrustListener
from .trust.kept import StartingBook, TrustLoss, kept_outside, starting_book
from .values.agent_data import SECTIONS, AgentData, AgentDataError, UncertainSend
from .values.checkpoints import ACTIVE, COMPLETED
from .values.decrypt_failures import DecryptFailures, DecryptionOutcome, DeviceKey
from .values.groups import GroupError
from .values.history import History, Reply
from .values.history_v1 import HistoryKeyError
from .values.payloads import (
    CHAT_MESSAGE,
    PUBLIC_ATTACHMENT_FIELDS,
    WIDGET_RESPONSE,
    public_attachment,
)
from .values.requests import Request, RequestTooLargeError
from .values.send_queue import (
    DEFAULT_EXPIRE_AFTER,
    QueueFullError,
)
from .values.sent_widgets import SentWidget
from .values.trust_book import (
    DeviceTrust,
    KeyChangedError,
    TrustBook,
    TrustState,
    same_code,
)
from .values.widget_answers import (
    Addressee,
    MemberAnswers,
    WidgetResponse,
    answer_problem,
    parse_response,
)
from .values.widgets import (
    CHOICE,
    CONFIRM,
    DATETIME,
    DATETIME_MODES,
    FORM,
    PERMISSION,
    RESPONSE_MODES,
    WIDGET_STANDARD,
    WIDGET_UPDATE,
    WidgetError,
    build_update,
    build_widget,
    check_patch,
    check_widget,
)

__all__ = [
    "ACTIVE",
    "CHAT_MESSAGE",
    "CHOICE",
    "COMPLETED",
    "CONFIRM",
    "DATETIME",
    "DATETIME_MODES",
    "DEFAULT_EXPIRE_AFTER",
    "FORM",
    "MAX_AGENT_DESCRIPTION",
    "MAX_AGENT_NAME",
    "MAX_CHECKPOINT_LABEL_CHARS",
    "MAX_CHECKPOINT_TEXT_CHARS",
    "MAX_EXPIRE_AFTER",
    "MAX_FILES_PER_SEND",
    "MAX_FILE_BYTES",
    "MAX_HANDED_OVER",
    "MAX_HISTORY_ENTRIES",
    "MAX_NOTE_CHARS",
    "MAX_QUEUED_SENDS",
    "MAX_QUEUED_SEND_BYTES",
    "MAX_SEND_TEXT_CHARS",
    "PERMISSION",
    "PUBLIC_ATTACHMENT_FIELDS",
    "RESPONSE_MODES",
    "SECTIONS",
    "STORE_VERSION",
    "WIDGET_RESPONSE",
    "WIDGET_STANDARD",
    "WIDGET_UPDATE",
    "Addressee",
    "Agent",
    "AgentConfig",
    "AgentData",
    "AgentDataError",
    "AgentHooks",
    "AgentHost",
    "AgentStatus",
    "AgentStore",
    "AgentStores",
    "AgentSummary",
    "AuthorizationRequest",
    "ConnectionState",
    "DecryptFailures",
    "DecryptionOutcome",
    "DeviceKey",
    "DeviceTrust",
    "DocumentTooLargeError",
    "EncryptedFile",
    "FrameError",
    "GroupError",
    "History",
    "HistoryKeyError",
    "Installation",
    "InstallationRevokedError",
    "IssuedToken",
    "KeyChangedError",
    "Member",
    "MemberAnswers",
    "MemberDevice",
    "MissingGroupKeyError",
    "Opening",
    "OutgoingFile",
    "PacerelleApiError",
    "PacerelleAuthError",
    "PacerelleConnectionError",
    "PacerelleError",
    "PacerelleResponseError",
    "QueueFullError",
    "Reply",
    "Request",
    "RequestTooLargeError",
    "ResponseTooLargeError",
    "RuntimeTokens",
    "SeenConversation",
    "SendError",
    "SendRefusal",
    "SentWidget",
    "SessionSummary",
    "StartingBook",
    "StoreError",
    "StoreLocation",
    "StoreProblem",
    "TrustBook",
    "TrustDoor",
    "TrustListener",
    "TrustLoss",
    "TrustState",
    "UncertainSend",
    "UntrustedGroupKeysError",
    "WidgetError",
    "WidgetResponse",
    "answer_problem",
    "begin",
    "build_update",
    "build_widget",
    "check_patch",
    "check_widget",
    "exchange_code",
    "group_recipient",
    "install_agent",
    "is_group_recipient",
    "is_relay_id",
    "kept_outside",
    "migrate",
    "native_crypto_unavailable",
    "normalize_server_url",
    "open_agent",
    "parse_response",
    "public_attachment",
    "register_client",
    "request_runtime_token",
    "same_code",
    "starting_book",
    "versioned",
]
