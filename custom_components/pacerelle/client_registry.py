"""OAuth client ids this Home Assistant registered with Pacerelle, one per server and callback.

Agent Connect needs a registered client for each redirect URI. The integration registers
its own (`POST /oauth/register`) the first time a server and callback URL are used and
reuses the client id afterwards. Client ids are public identifiers, not secrets: they live
in a plain Home Assistant Store.
"""

import asyncio
from typing import Any, TypedDict

import aiohttp
from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store
from homeassistant.util.hass_dict import HassKey

from .client import AgentConnect
from .const import DOMAIN

STORAGE_KEY = f"{DOMAIN}.oauth_clients"
STORAGE_VERSION = 1
# The app name Pacerelle shows on its approval page ("Requested by the app ...").
CLIENT_NAME = "Home Assistant"

DATA_CLIENT_REGISTRY: HassKey[ClientRegistry] = HassKey(f"{DOMAIN}_client_registry")


class RegisteredClient(TypedDict):
    server_url: str
    redirect_uri: str
    client_id: str


class ClientRegistry:
    """Registered client ids by (server URL, redirect URI), persisted."""

    def __init__(self, hass: HomeAssistant) -> None:
        self._store = Store[dict[str, Any]](hass, STORAGE_VERSION, STORAGE_KEY)
        self._clients: dict[tuple[str, str], str] | None = None
        # One registration at a time: two flows started together share the client.
        self._lock = asyncio.Lock()

    async def async_client_id(
        self, session: aiohttp.ClientSession, server_url: str, redirect_uri: str
    ) -> tuple[str, bool]:
        """The client id for this server and callback, and whether it was already known.

        Registers a client when none is known (raises the client library's errors).
        """
        async with self._lock:
            clients = await self._async_clients()
            known = clients.get((server_url, redirect_uri))
            if known is not None:
                return known, True
            client_id = await AgentConnect.register(
                session, server_url, client_name=CLIENT_NAME, redirect_uri=redirect_uri
            )
            clients[(server_url, redirect_uri)] = client_id
            await self._async_save(clients)
            return client_id, False

    async def async_forget(self, server_url: str, redirect_uri: str, client_id: str) -> None:
        """Drop a client id the server no longer knows (only if it is still the one kept)."""
        async with self._lock:
            clients = await self._async_clients()
            if clients.get((server_url, redirect_uri)) == client_id:
                del clients[(server_url, redirect_uri)]
                await self._async_save(clients)

    async def _async_clients(self) -> dict[tuple[str, str], str]:
        if self._clients is None:
            stored = await self._store.async_load() or {}
            self._clients = {
                (item["server_url"], item["redirect_uri"]): item["client_id"]
                for item in stored.get("clients", [])
            }
        return self._clients

    async def _async_save(self, clients: dict[tuple[str, str], str]) -> None:
        items: list[RegisteredClient] = [
            {"server_url": server, "redirect_uri": uri, "client_id": client_id}
            for (server, uri), client_id in sorted(clients.items())
        ]
        await self._store.async_save({"clients": items})


def client_registry(hass: HomeAssistant) -> ClientRegistry:
    """The registry of this Home Assistant instance."""
    registry = hass.data.get(DATA_CLIENT_REGISTRY)
    if registry is None:
        registry = hass.data[DATA_CLIENT_REGISTRY] = ClientRegistry(hass)
    return registry
