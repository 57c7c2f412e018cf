"""Everything the emulated Pacerelle remembers, as plain records that serialize to JSON."""

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Self

type Json = dict[str, Any]


class Record:
    """A dataclass that round-trips through JSON, ignoring fields it does not know."""

    def to_json(self) -> Json:
        return asdict(self)  # type: ignore[call-overload, no-any-return]

    @classmethod
    def from_json(cls, data: Json) -> Self:
        known = {item.name for item in fields(cls)}  # type: ignore[arg-type]
        return cls(**{key: value for key, value in data.items() if key in known})


@dataclass
class OAuthClient(Record):
    client_id: str
    client_name: str
    redirect_uris: list[str]


@dataclass
class ConnectKey(Record):
    key: str
    user_id: str
    created_at: float
    used_at: float | None = None


@dataclass
class AuthRequest(Record):
    """One Agent Connect authorization, from the connection key to the installation."""

    request_id: str
    client_id: str
    redirect_uri: str
    state: str
    code_challenge: str
    agent_name: str
    agent_description: str
    user_id: str
    created_at: float
    expires_at: float
    status: str = "pending"  # pending, approved, denied, exchanged
    code: str | None = None
    agent_id: str | None = None


@dataclass
class Installation(Record):
    agent_id: str
    owner_id: str
    conversation_id: str
    agent_name: str
    agent_description: str
    client_id: str
    installation_token: str
    created_at: float
    revoked: bool = False


@dataclass
class RuntimeToken(Record):
    token: str
    agent_id: str
    expires_at: float


@dataclass
class AgentKeys(Record):
    """The agent's published prekey bundle and its unused one-time prekeys, oldest first."""

    bundle: Json | None = None
    one_time_prekeys: list[Json] = field(default_factory=list)
    handed_out: int = 0


@dataclass
class BlobRecord(Record):
    blob_id: str
    sha256: str
    size: int
    uploaded_by: str
    conversation_id: str | None = None


@dataclass
class DeviceRecord(Record):
    """One human device: its Signal store and the agent identity each session was made with."""

    user_id: str
    device_id: str
    snapshot_b64: str | None = None
    session_identities: dict[str, str] = field(default_factory=dict)
    # The device's public identity key (33 bytes, base64), read once from its store.
    identity_key_b64: str | None = None


@dataclass
class ConversationLog(Record):
    """The human side of a conversation: what was sent and what each device received."""

    conversation_id: str
    sent: list[Json] = field(default_factory=list)
    inbox: list[Json] = field(default_factory=list)
    history_key: Json | None = None


@dataclass
class GroupRecord(Record):
    """A group conversation: its members, the agents in it, and every sender key made.

    Each key is `{sender_id, key_id, epoch, raw_key_b64, holders: [user ids]}`: the members
    who held it (the members of the group when it was made)."""

    conversation_id: str
    name: str
    owner_id: str
    members: list[str]
    agent_ids: list[str]
    epoch: int = 0
    keys: list[Json] = field(default_factory=list)
    sent: list[Json] = field(default_factory=list)
    inbox: list[Json] = field(default_factory=list)


@dataclass
class EmulatorState:
    """The whole server state. Mutated only on the event loop, so no locks are needed."""

    clients: dict[str, OAuthClient] = field(default_factory=dict)
    connect_keys: dict[str, ConnectKey] = field(default_factory=dict)
    requests: dict[str, AuthRequest] = field(default_factory=dict)
    installations: dict[str, Installation] = field(default_factory=dict)
    runtime_tokens: dict[str, RuntimeToken] = field(default_factory=dict)
    agent_keys: dict[str, AgentKeys] = field(default_factory=dict)
    blobs: dict[str, BlobRecord] = field(default_factory=dict)
    devices: dict[str, DeviceRecord] = field(default_factory=dict)
    conversations: dict[str, ConversationLog] = field(default_factory=dict)
    groups: dict[str, GroupRecord] = field(default_factory=dict)
    # Messages for each agent that it has not acknowledged with ACK_READ, in arrival order.
    queues: dict[str, list[Json]] = field(default_factory=dict)
    group_keys: list[Json] = field(default_factory=list)
    # The device each conversation's user last sent from: where replies without
    # to_device_id go.
    last_device: dict[str, str] = field(default_factory=dict)
    clock_offset: float = 0.0

    def installation_by_token(self, token: str) -> Installation | None:
        return next(
            (item for item in self.installations.values() if item.installation_token == token),
            None,
        )

    def installation_by_conversation(self, conversation_id: str) -> Installation | None:
        return next(
            (
                item
                for item in self.installations.values()
                if item.conversation_id == conversation_id
            ),
            None,
        )

    def request_by_code(self, code: str) -> AuthRequest | None:
        return next((item for item in self.requests.values() if item.code == code), None)

    def keys_for(self, agent_id: str) -> AgentKeys:
        return self.agent_keys.setdefault(agent_id, AgentKeys())

    def conversation_log(self, conversation_id: str) -> ConversationLog:
        return self.conversations.setdefault(conversation_id, ConversationLog(conversation_id))

    def to_json(self) -> Json:
        tables: Json = {
            name: {key: record.to_json() for key, record in getattr(self, name).items()}
            for name in _TABLES
        }
        return {
            **tables,
            "queues": self.queues,
            "group_keys": self.group_keys,
            "last_device": self.last_device,
            "clock_offset": self.clock_offset,
        }

    @classmethod
    def from_json(cls, data: Json) -> EmulatorState:
        state = cls(
            queues=dict(data.get("queues", {})),
            group_keys=list(data.get("group_keys", [])),
            last_device=dict(data.get("last_device", {})),
            clock_offset=float(data.get("clock_offset", 0.0)),
        )
        for name, record_type in _TABLES.items():
            table = getattr(state, name)
            for key, value in data.get(name, {}).items():
                table[key] = record_type.from_json(value)
        return state


_TABLES: dict[str, type[Record]] = {
    "clients": OAuthClient,
    "connect_keys": ConnectKey,
    "requests": AuthRequest,
    "installations": Installation,
    "runtime_tokens": RuntimeToken,
    "agent_keys": AgentKeys,
    "blobs": BlobRecord,
    "devices": DeviceRecord,
    "conversations": ConversationLog,
    "groups": GroupRecord,
}
