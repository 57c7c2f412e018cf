"""The loop-blocking detection of tests/helpers/loop_blocking.py is on in every test."""

import os
from pathlib import Path

import pytest
from homeassistant.core import HomeAssistant

from custom_components.pacerelle.client.limits import MAX_FILE_BYTES
from custom_components.pacerelle.files.access import read_regular_file
from custom_components.pacerelle.files.attachments import async_read_file
from tests.helpers.loop_blocking import BlockingCatches


async def test_a_blocking_call_of_pacerelle_in_the_loop_fails(
    hass: HomeAssistant, tmp_path: Path, no_blocking_calls_in_the_loop: BlockingCatches
) -> None:
    catches = no_blocking_calls_in_the_loop
    path = tmp_path / "a.txt"
    path.write_bytes(b"a")  # the test's own I/O is not Pacerelle's: allowed
    hass.config.allowlist_external_dirs = {str(tmp_path)}

    with pytest.raises(RuntimeError, match="Caught blocking call to is_allowed_path"):
        read_regular_file(str(path), hass.config.is_allowed_path, MAX_FILE_BYTES)
    with pytest.raises(RuntimeError, match="Caught blocking call to open"):
        read_regular_file(str(path), lambda _path: True, MAX_FILE_BYTES)
    assert [name for name, _ in catches.found] == ["Config.is_allowed_path", "os.open"]
    assert all("files/access.py" in where for _, where in catches.found)
    catches.found.clear()  # caught on purpose: the fixture must not fail this test

    # The same work in the executor, as the integration does it, is not a blocking call.
    assert (await async_read_file(hass, str(path))).data == b"a"
    assert catches.found == []


def test_outside_a_running_loop_nothing_is_caught(
    tmp_path: Path, no_blocking_calls_in_the_loop: BlockingCatches
) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"a")
    assert read_regular_file(str(path), lambda _path: True, 10) == b"a"
    assert os.open is not os.open.__wrapped__  # type: ignore[attr-defined]
    assert no_blocking_calls_in_the_loop.found == []
