"""A hostile sender names files: nothing lands outside the folder the user chose.

The person's device (the emulator's human side, which encrypts as a real app does) sends
attachments whose `id`, `name` and `mime` are attacks, and the relay picks a hostile
message id; the agent saves them through the media folder and `download_attachment`.
Each test lists the whole temporary tree (the configuration directory included) before and
after: every new file is inside the chosen folder, and the event still fires.
"""

import base64
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.limits import MAX_FILE_NAME_BYTES
from tests.emulator import human_side
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.media import media_agent
from tests.helpers.services import call, human_writes, refused


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def tree(root: Path) -> set[Path]:
    """Every file and link under `root` (links not followed)."""
    found: set[Path] = set()
    for folder, folders, files in os.walk(root):
        found.update(Path(folder, name) for name in files + folders)
    return found


def hostile_attachments(tmp_path: Path) -> list[dict[str, str]]:
    """Attachment metadata as an attacker writes it; content `n` for the n-th (from 0)."""
    metadata = [
        {"id": "../../x", "name": ".."},
        {"id": str(tmp_path / "abs"), "name": "."},
        {"id": "../../../y", "name": ""},
        {"id": "a4", "name": "a/../../b"},
        {"id": "a5", "name": "nul\0byte.txt"},
        {"id": "a6", "name": "\U0001d49c" * 100 + ".txt"},  # 400 bytes of UTF-8
        {"id": "../../z", "name": "...", "mime": "image/jpeg"},
        {"id": "/etc/passwd", "name": "../../../.bashrc"},
        {"id": "a9", "name": "..\\..\\win.ini"},
    ]
    return [{**item, "data_b64": b64(f"content {n}".encode())} for n, item in enumerate(metadata)]


def relay_names_messages(monkeypatch: pytest.MonkeyPatch, message_id: str) -> None:
    """The relay (the emulator's human side) gives the next message this id."""
    monkeypatch.setattr(human_side, "uuid", SimpleNamespace(uuid4=lambda: message_id))


def assert_saved_inside(folder: Path, attachments: list[dict[str, object]]) -> None:
    """Every attachment saved, in `folder` itself, with its own content."""
    for n, item in enumerate(attachments):
        path = item["path"]
        assert isinstance(path, str), item
        assert Path(path).parent == folder, path
        assert len(Path(path).name.encode()) <= MAX_FILE_NAME_BYTES
        assert Path(path).read_bytes() == f"content {n}".encode()


async def test_hostile_attachment_names_stay_in_the_media_folder(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = await media_agent(hass, emulator, tmp_path)
    media = tmp_path / "media" / "pacerelle"
    relay_names_messages(monkeypatch, "../../../evil")
    before = tree(tmp_path)

    message = await human_writes(
        emulator, agent, text="look", attachments=hostile_attachments(tmp_path)
    )

    assert message["message_id"] == "../../../evil"
    folder = media / "evil"
    assert_saved_inside(folder, message["attachments"])
    assert tree(tmp_path) - before == {folder, *(Path(i["path"]) for i in message["attachments"])}
    names = sorted(Path(item["path"]).name for item in message["attachments"])
    assert "attachment-1" in names  # ".." named nothing: our name, not the id "../../x"
    assert "attachment-7.jpg" in names  # an extension only from a known type
    assert not (tmp_path / "abs").exists()
    assert not (tmp_path / "x").exists()


async def test_link_planted_where_the_message_folder_goes(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = await media_agent(hass, emulator, tmp_path)
    media = tmp_path / "media" / "pacerelle"
    outside = tmp_path / "outside"
    outside.mkdir()
    # The attacker knows the next message id (the relay chose it) and can write in the
    # media folder: a link there would send the file elsewhere.
    (media / "m-planted").symlink_to(outside, target_is_directory=True)
    (media / "m-file").write_text("in the way")
    before = tree(tmp_path)

    for message_id in ("m-planted", "m-file"):
        relay_names_messages(monkeypatch, message_id)
        message = await human_writes(
            emulator, agent, text="x", attachments=[{"name": "a.txt", "data_b64": b64(b"a")}]
        )
        assert [item["path"] for item in message["attachments"]] == [None]

    assert tree(tmp_path) == before
    assert list(outside.iterdir()) == []
    assert "Could not save attachment" in caplog.text


async def test_download_attachment_with_hostile_names_and_a_planted_link(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    hass.config.allowlist_external_dirs = {str(tmp_path)}
    agent = await start_agent(hass, emulator)
    target = tmp_path / "downloads"
    target.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("keep me")
    # Where "b" (from "a/../../b") would go: a link to a file outside.
    (target / "b").symlink_to(secret)
    message = await human_writes(
        emulator, agent, text="", attachments=hostile_attachments(tmp_path)
    )
    before = tree(tmp_path)

    result = await call(
        hass,
        "download_attachment",
        {"message_id": message["message_id"], "folder": str(target)},
    )

    assert_saved_inside(target, result["files"])
    assert tree(tmp_path) - before == {Path(item["path"]) for item in result["files"]}
    assert secret.read_text() == "keep me"
    assert str(target / "b (1)") in [item["path"] for item in result["files"]]


async def test_download_makes_an_allowed_folder_and_no_other(
    hass: HomeAssistant, emulator: EmulatorHandle, tmp_path: Path
) -> None:
    hass.config.allowlist_external_dirs = {str(tmp_path / "allowed")}
    (tmp_path / "allowed").mkdir()
    agent = await start_agent(hass, emulator)
    attachments = [{"name": "a.txt", "data_b64": b64(b"a")}]
    message = await human_writes(emulator, agent, text="", attachments=attachments)
    data = {"message_id": message["message_id"]}

    result = await call(
        hass, "download_attachment", {**data, "folder": str(tmp_path / "allowed" / "new")}
    )
    assert [item["path"] for item in result["files"]] == [
        str(tmp_path / "allowed" / "new" / "a.txt")
    ]

    # A link inside the allowed folder to a folder outside: refused on what it resolves to.
    (tmp_path / "outside").mkdir()
    (tmp_path / "allowed" / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    for folder in (tmp_path / "elsewhere", tmp_path / "allowed" / "out" / "new"):
        await refused(
            hass, "download_attachment", {**data, "folder": str(folder)}, "path_not_allowed"
        )
        assert not folder.exists()
    assert list((tmp_path / "outside").iterdir()) == []
