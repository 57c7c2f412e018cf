"""Attachment paths that cannot be used end as translated errors, never as a write elsewhere."""

from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError

from custom_components.pacerelle.files.attachments import (
    async_allowed_folder,
    async_save,
    target_of,
)
from custom_components.pacerelle.files.incoming import IncomingPath


@pytest.mark.parametrize("folder", ["media/pacerelle", "", "/media/bad\0name"])
async def test_a_folder_that_is_no_absolute_path_is_not_allowed(
    hass: HomeAssistant, folder: str
) -> None:
    with pytest.raises(ServiceValidationError) as refused:
        await async_allowed_folder(hass, folder)
    assert refused.value.translation_key == "path_not_allowed"
    assert refused.value.translation_placeholders == {"path": folder}


async def test_an_allowed_folder_is_given_back_normalised(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    hass.config.allowlist_external_dirs = {str(tmp_path)}
    assert await async_allowed_folder(hass, f"{tmp_path}/./in/../in") == str(tmp_path / "in")


def test_an_incoming_file_in_a_relative_folder_has_no_target() -> None:
    with pytest.raises(ServiceValidationError) as refused:
        target_of("relative/folder", {"id": "a1", "name": "photo.jpg"}, 0, "msg-1")
    assert refused.value.translation_key == "path_not_allowed"
    assert refused.value.translation_placeholders == {"path": "relative/folder"}


async def test_a_folder_that_is_a_file_fails_the_write_and_changes_nothing(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    hass.config.allowlist_external_dirs = {str(tmp_path)}
    blocker = tmp_path / "media"
    blocker.write_bytes(b"not a folder")
    target = IncomingPath(str(blocker), "msg-1", "photo.jpg")

    with pytest.raises(HomeAssistantError) as failed:
        await async_save(hass, target, b"picture")
    assert not isinstance(failed.value, ServiceValidationError)  # a fault, not the user's
    assert failed.value.translation_key == "file_write_failed"
    assert failed.value.translation_placeholders["path"] == str(blocker)
    assert failed.value.translation_placeholders["error"]
    assert blocker.read_bytes() == b"not a folder"
    assert blocker.is_file()
