"""Constants of the Pacerelle integration."""

import os
from typing import Final

DOMAIN: Final = "pacerelle"

CONF_CONNECTION_KEY: Final = "connection_key"
CONF_AGENT_NAME: Final = "agent_name"
CONF_AGENT_DESCRIPTION: Final = "agent_description"
CONF_SERVER_URL: Final = "server_url"
# Config entry data besides the above (not secret; the installation token is in the store).
CONF_AGENT_ID: Final = "agent_id"
CONF_OWNER_ID: Final = "owner_id"
CONF_CONVERSATION_ID: Final = "conversation_id"
# A named conversation (config subentry, subentry_flow.py): its data is the conversation id
# (whom it reaches the agent's store keeps: conversation_names.py).
SUBENTRY_CONVERSATION: Final = "conversation"
# The owner's direct conversation's subentry, made with the entry (owner_conversation.py).
OWNER_CONVERSATION_TITLE: Final = "Owner"

# Config entry version. 1.2: unique id = the owner's Pacerelle account, device and entity
# unique ids keyed on the entry (migration.py migrates 1.1 entries). 1.3: the owner's direct
# conversation is a `conversation` subentry (migration.py adds it to 1.2 entries).
ENTRY_VERSION: Final = 1
ENTRY_MINOR_VERSION: Final = 3

DEFAULT_AGENT_NAME: Final = "Home Assistant"
DEFAULT_AGENT_DESCRIPTION: Final = (
    "Your Home Assistant: answers your messages, reports what happens at home "
    "and asks before it acts."
)
DEFAULT_SERVER_URL: Final = "https://api.pacerelle.com"
# Development only: scripts/develop sets it so that new agents talk to the local emulator.
ENV_DEFAULT_SERVER_URL: Final = "PACERELLE_DEFAULT_SERVER_URL"
ENV_PLAINTEXT: Final = "PACERELLE_DEVELOPMENT_PLAINTEXT"


def default_server_url() -> str:
    """The server URL the config flow offers: Pacerelle's, unless development overrides it."""
    return os.environ.get(ENV_DEFAULT_SERVER_URL) or DEFAULT_SERVER_URL


def development_plaintext() -> bool:
    """Whether every agent sends and accepts unencrypted messages: a development override
    (`PACERELLE_DEVELOPMENT_PLAINTEXT=1`, for Pacerelle's debugging servers), never a setting."""
    return os.environ.get(ENV_PLAINTEXT) == "1"
