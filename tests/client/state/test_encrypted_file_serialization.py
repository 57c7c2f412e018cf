"""The store's JSON (encrypted_file._serialized): orjson where it can, the standard library
where orjson refuses, and what is read back is what was written either way."""

import json
from pathlib import Path
from typing import Any

import pytest

from custom_components.pacerelle.client.limits import GCM_NONCE_BYTES, GCM_TAG_BYTES
from custom_components.pacerelle.client.state.encrypted_file import EncryptedFile
from custom_components.pacerelle.client.values.requests import stored_size

HEADER = 5  # MAGIC and FORMAT


@pytest.fixture
def store(tmp_path: Path) -> EncryptedFile:
    store = EncryptedFile(tmp_path / "pacerelle", "agt_1")
    store.create({"version": 2})
    return store


@pytest.mark.parametrize(
    "document",
    [
        {"text": 'Lumière, 灯, \U0001f4a1, \x01 "quoted" \\ slash', "at": 1764500000.123456},
        {"big": 2**70, "negative": -(2**70)},  # beyond 64 bits: orjson refuses, json writes
        {"lone": "\ud800"},  # a lone surrogate: orjson refuses, json escapes it
        {"nested": [[[[{"a": None, "b": True, "c": 1e-7, "d": 1e16}]]]]},
    ],
)
def test_what_is_written_is_read_back(store: EncryptedFile, document: dict[str, Any]) -> None:
    store.write(document)
    assert store.read() == document


def test_never_larger_than_the_bounds_estimate(store: EncryptedFile) -> None:
    """The bounds measure with the standard library's escapes; what is written is not larger."""
    document = {"text": "é" * 1000 + "\U0001f4a1" * 1000 + "\x01" * 1000}
    store.write(document)
    plain = len(store.data_path.read_bytes()) - HEADER - GCM_NONCE_BYTES - GCM_TAG_BYTES
    assert plain <= stored_size(document) == len(json.dumps(document, separators=(",", ":")))
