"""Constants of the Pacerelle integration."""

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

DEFAULT_AGENT_NAME: Final = "Home Assistant"
DEFAULT_AGENT_DESCRIPTION: Final = (
    "Your Home Assistant: answers your messages, reports what happens at home "
    "and asks before it acts."
)
DEFAULT_SERVER_URL: Final = "https://api.pacerelle.com"
