"""The encrypted file that holds an agent's state at rest."""

import json
import os
import stat
from pathlib import Path

import pytest

from custom_components.pacerelle.client.state import encrypted_file
from custom_components.pacerelle.client.state.encrypted_file import EncryptedFile
from custom_components.pacerelle.client.state.errors import StoreError, StoreProblem

DOCUMENT = {"version": 1, "identity": "secret-identity", "sessions": {"a": [1, 2, 3]}}


@pytest.fixture
def store(tmp_path: Path) -> EncryptedFile:
    return EncryptedFile(tmp_path / "pacerelle", "agent-1")


def test_round_trip_with_private_modes(store: EncryptedFile) -> None:
    store.create(DOCUMENT)
    assert store.read() == DOCUMENT
    assert stat.S_IMODE(store.directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.key_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.data_path.stat().st_mode) == 0o600


def test_nothing_in_clear_on_disk(store: EncryptedFile) -> None:
    store.create(DOCUMENT)
    raw = store.data_path.read_bytes()
    assert b"secret-identity" not in raw
    assert b"sessions" not in raw


def test_write_replaces_and_leaves_no_temporary_file(store: EncryptedFile) -> None:
    store.create(DOCUMENT)
    store.write({"version": 1, "identity": "other"})
    assert store.read() == {"version": 1, "identity": "other"}
    assert sorted(p.name for p in store.directory.iterdir()) == ["agent-1.enc", "agent-1.key"]


def test_create_refuses_to_overwrite(store: EncryptedFile) -> None:
    store.create(DOCUMENT)
    with pytest.raises(FileExistsError):
        store.create({"version": 1})
    assert store.read() == DOCUMENT


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda s: s.data_path.unlink(), StoreProblem.MISSING),
        (lambda s: s.key_path.unlink(), StoreProblem.KEY_MISSING),
        (lambda s: s.key_path.write_bytes(b"not base64!"), StoreProblem.CORRUPT),
        (lambda s: s.data_path.write_bytes(b"garbage"), StoreProblem.CORRUPT),
        (lambda s: s.data_path.write_bytes(b"PCRL\x09" + bytes(40)), StoreProblem.CORRUPT),
        (lambda s: _flip_last_byte(s.data_path), StoreProblem.UNDECRYPTABLE),
        (lambda s: s.key_path.write_bytes(b"A" * 43 + b"="), StoreProblem.UNDECRYPTABLE),
    ],
)
def test_damage_is_reported_precisely(store: EncryptedFile, damage, problem: StoreProblem) -> None:
    store.create(DOCUMENT)
    damage(store)
    with pytest.raises(StoreError) as err:
        store.read()
    assert err.value.problem is problem


def test_a_file_moved_to_another_agent_does_not_decrypt(tmp_path: Path) -> None:
    first = EncryptedFile(tmp_path, "agent-1")
    second = EncryptedFile(tmp_path, "agent-2")
    first.create(DOCUMENT)
    second.create({"version": 1})
    second.data_path.write_bytes(first.data_path.read_bytes())
    second.key_path.write_bytes(first.key_path.read_bytes())
    with pytest.raises(StoreError) as err:
        second.read()
    assert err.value.problem is StoreProblem.UNDECRYPTABLE


def test_a_document_that_is_not_an_object_is_corrupt(store: EncryptedFile) -> None:
    store.create(DOCUMENT)
    store.write(DOCUMENT)
    key = store._read_key()
    nonce = os.urandom(12)
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    body = AESGCM(key).encrypt(nonce, json.dumps([1, 2]).encode(), store._aad())
    store.data_path.write_bytes(store._header() + nonce + body)
    with pytest.raises(StoreError) as err:
        store.read()
    assert err.value.problem is StoreProblem.CORRUPT


def test_a_failed_write_keeps_the_old_document(
    store: EncryptedFile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash between writing and renaming cannot be produced for real; simulate the rename."""
    store.create(DOCUMENT)

    def refuse(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(encrypted_file.os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        store.write({"version": 1, "identity": "new"})
    monkeypatch.undo()
    assert store.read() == DOCUMENT
    assert sorted(p.name for p in store.directory.iterdir()) == ["agent-1.enc", "agent-1.key"]


@pytest.mark.parametrize("name", ["", "../x", ".hidden", "a/b"])
def test_names_that_escape_the_directory_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="invalid store name"):
        EncryptedFile(tmp_path, name)


def _flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
