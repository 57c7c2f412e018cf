"""One translator (errors.py): every kind of the client's errors and every send refusal
has a row whose translations exist, with every placeholder they use; a revoked installation
met by an action is a translated error and starts reauthentication, from one place only."""

import ast
import base64
import importlib
import json
import pkgutil
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from homeassistant.config_entries import SOURCE_REAUTH
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError

from custom_components.pacerelle import client
from custom_components.pacerelle.client import DeviceTrust, PacerelleError, TrustState
from custom_components.pacerelle.client.errors import PacerelleAuthError
from custom_components.pacerelle.client.relay.tokens import InstallationRevokedError
from custom_components.pacerelle.client.state.errors import DocumentTooLargeError
from custom_components.pacerelle.client.values.send_queue import QueueFullError
from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.errors import (
    ERRORS,
    REFUSALS,
    action_error,
    tool_error,
    tool_errors,
    translation,
)
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.services import human_writes, refused, stored_attachment

PACKAGE = Path(__file__).parents[2] / "custom_components" / "pacerelle"
STRINGS = [PACKAGE / "strings.json", PACKAGE / "translations" / "en.json"]
FAILED_KEYS = ("send_failed", "download_failed")  # an action's own word for a failure


def _tree() -> set[type[PacerelleError]]:
    def below(kind: type[PacerelleError]) -> set[type[PacerelleError]]:
        return {kind}.union(*(below(sub) for sub in kind.__subclasses__()))

    for info in pkgutil.walk_packages(client.__path__, f"{client.__name__}."):
        importlib.import_module(info.name)  # every client module: the whole tree defined
    return below(PacerelleError)


SAMPLES: dict[type[PacerelleError], Callable[[], PacerelleError]] = {
    client.StoreError: lambda: client.StoreError(client.StoreProblem.CORRUPT, "a bad row"),
    DocumentTooLargeError: lambda: DocumentTooLargeError(10, 5),
    QueueFullError: lambda: QueueFullError("100 messages"),
    client.WidgetError: lambda: client.WidgetError("spec.title", "must be text"),
    client.KeyChangedError: lambda: client.KeyChangedError(
        DeviceTrust("usr_1", "2", b"\x05" * 33, TrustState.TRUSTED)
    ),
}


def _sample(kind: type[PacerelleError]) -> list[PacerelleError]:
    """Instances of `kind` as the client raises them (each refusal, for SendError)."""
    if kind is client.SendError:
        return [client.SendError(reason, "the detail") for reason in client.SendRefusal]
    if issubclass(kind, client.PacerelleApiError):
        return [kind(401, "refused")]
    return [SAMPLES[kind]() if kind in SAMPLES else kind("what went wrong")]


def _placeholders(key: str) -> dict[str, set[str]]:
    return {
        path.name: {
            name
            for _, name, _, _ in string.Formatter().parse(
                json.loads(path.read_text())["exceptions"][key]["message"]
            )
            if name
        }
        for path in STRINGS
    }


def test_every_refusal_and_every_error_class_has_a_row() -> None:
    tree = _tree()
    assert {client.StoreError, QueueFullError, client.WidgetError} <= tree
    assert client.KeyChangedError in tree
    assert set(REFUSALS) == set(client.SendRefusal)
    # SendError takes its refusal's row; every other kind has its own.
    assert set(ERRORS) == set(client.ErrorKind) - {client.ErrorKind.SEND_REFUSED}
    assert {kind.kind for kind in tree} == set(client.ErrorKind)


def test_every_translation_exists_with_the_placeholders_it_uses() -> None:
    exceptions = [json.loads(path.read_text())["exceptions"] for path in STRINGS]
    for kind in _tree():
        for err in _sample(kind):
            row = translation(err)
            for key in FAILED_KEYS if row.action is None else (row.action,):
                given = action_error(err, agent_name="Home", message_id="m1", failed=key)
                assert given.translation_key == key
                assert isinstance(given, ServiceValidationError) is row.misuse
                assert all(key in strings for strings in exceptions), (kind, key)
                for file, names in _placeholders(key).items():
                    assert names <= set(given.translation_placeholders or {}), (kind, key, file)
            told = tool_error(err)
            assert all(row.llm in strings for strings in exceptions), (kind, row.llm)
            for file, names in _placeholders(row.llm).items():
                assert names <= set(told.translation_placeholders or {}), (kind, row.llm, file)


def test_an_error_takes_the_row_of_its_kind() -> None:
    class Unlisted(client.StoreError):
        pass

    store = client.ErrorKind.STORE
    assert translation(Unlisted(client.StoreProblem.CORRUPT, "x")) == ERRORS[store]
    refusal = client.SendError(client.SendRefusal.QUEUE_FULL, "100 messages")
    assert translation(refusal) == REFUSALS[client.SendRefusal.QUEUE_FULL]


def test_reauth_starts_from_one_place() -> None:
    """Only errors.py asks Home Assistant for a reauth flow (set-up's ConfigEntryAuthFailed
    aside, which Home Assistant turns into one)."""
    callers = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "async_start_reauth":
                callers.add(str(path.relative_to(PACKAGE)))
    assert callers == {"errors.py"}


async def test_an_action_that_meets_a_revoked_installation_asks_to_sign_in_again(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    """The relay refuses the installation token while the gateway stays up: the running
    agent has not met it, the action does (a blob route refuses its runtime token, the
    renewal is refused), and says so translated, with a reauth flow waiting."""
    agent = await start_agent(hass, emulator, spoken=True)
    (tmp_path / "media").mkdir()
    hass.config.allowlist_external_dirs = {str(tmp_path / "media")}
    file = {"name": "a.txt", "data_b64": base64.b64encode(b"a").decode()}
    message = await human_writes(emulator, agent, text="", attachments=[file])
    descriptor = stored_attachment(agent, message["message_id"])
    await emulator.faults(
        runtime_token_status=401, route_status={f"/agent/blobs/{descriptor['blob_id']}": 401}
    )
    request = {"message_id": message["message_id"], "folder": str(tmp_path / "media")}
    entry = hass.config_entries.async_get_entry(agent.runtime.entry_id)
    assert entry is not None
    assert list(entry.async_get_active_flows(hass, {SOURCE_REAUTH})) == []
    await refused(hass, "download_attachment", request, "revoked")
    await hass.async_block_till_done()
    flows = list(entry.async_get_active_flows(hass, {SOURCE_REAUTH}))
    assert [flow["handler"] for flow in flows] == [DOMAIN]
    await refused(hass, "download_attachment", request, "revoked")  # met again: one flow
    await hass.async_block_till_done()
    assert len(list(entry.async_get_active_flows(hass, {SOURCE_REAUTH}))) == 1
    assert list((tmp_path / "media").iterdir()) == []


async def test_a_tool_that_meets_a_revoked_installation_asks_to_sign_in_again(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    """No tool reaches the REST API yet; one that does is held to the same rule: the model
    reads `llm_revoked`, the user gets one reauth flow."""
    started = await start_agent(hass, emulator)
    _, entry = started.installed, started.entry
    for _ in range(2):
        with pytest.raises(HomeAssistantError) as caught, tool_errors(hass, entry):
            raise InstallationRevokedError(401, "the installation was revoked")
        assert caught.value.translation_key == "llm_revoked"
        await hass.async_block_till_done()
    assert [f["handler"] for f in entry.async_get_active_flows(hass, {SOURCE_REAUTH})] == [DOMAIN]
    with pytest.raises(HomeAssistantError) as caught, tool_errors(hass, entry):
        raise PacerelleAuthError(401, "this route refused the runtime token")
    assert caught.value.translation_key == "llm_failed"  # no reauth for one route's refusal
