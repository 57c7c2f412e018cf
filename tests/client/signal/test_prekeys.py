"""The agent's prekey material, its publication bodies, and a native peer using our bundle."""

import base64
import hashlib
import json
import re
from dataclasses import FrozenInstanceError, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custom_components.pacerelle.client.signal.curve import serialize_public, xeddsa_verify
from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.identity import verification_code
from custom_components.pacerelle.client.signal.kem import serialize_kyber_public
from custom_components.pacerelle.client.signal.prekeys import (
    MAX_PREKEY_ID,
    ONE_TIME_PREKEY_LOW_WATER,
    ONE_TIME_PREKEY_TARGET,
    RETIRED_GRACE,
    ROTATION_INTERVAL,
    PreKeys,
    one_time_prekeys_json,
)
from tests.helpers.reference_peer import ReferenceBundle, ReferencePeer, reference_peer_available

NOW = 1_800_000_000
DAY = 24 * 3600
BUNDLE_FIELDS = {
    "registration_id",
    "device_id",
    "identity_key",
    "signed_prekey_id",
    "signed_prekey_public",
    "signed_prekey_signature",
    "kyber_prekey_id",
    "kyber_prekey_public",
    "kyber_prekey_signature",
    "protocol_features",
}


@pytest.fixture(scope="module")
def keys() -> PreKeys:
    return PreKeys.create(NOW)


def _decode(value: str) -> bytes:
    return base64.b64decode(value, validate=True)


def test_created_material_has_libsignal_shapes(keys: PreKeys) -> None:
    assert 1 <= keys.registration_id <= 16380
    assert keys.device_id == 1
    assert keys.signed_prekey.prekey_id == keys.kyber_prekey.prekey_id
    assert 1 <= keys.signed_prekey.prekey_id <= MAX_PREKEY_ID
    assert keys.signed_prekey.created_at == keys.kyber_prekey.created_at == NOW
    identity = keys.identity.public
    signed_public = serialize_public(keys.signed_prekey.key_pair.public)
    kyber_public = serialize_kyber_public(keys.kyber_prekey.public)
    assert xeddsa_verify(identity, signed_public, keys.signed_prekey.signature)
    assert xeddsa_verify(identity, kyber_public, keys.kyber_prekey.signature)
    ids = [prekey.prekey_id for prekey in keys.one_time_prekeys]
    assert len(ids) == len(set(ids)) == ONE_TIME_PREKEY_TARGET
    assert all(1 <= prekey_id <= MAX_PREKEY_ID for prekey_id in ids)
    assert keys.kyber_prekey.secret.hex()[:64] not in repr(keys)


def test_bundle_body_is_the_published_shape(keys: PreKeys) -> None:
    body = keys.bundle_json()
    assert set(body) == BUNDLE_FIELDS
    assert json.loads(json.dumps(body)) == body
    assert body["protocol_features"] == ["history-v1"]
    assert body["device_id"] == 1
    assert body["registration_id"] == keys.registration_id
    assert body["signed_prekey_id"] == body["kyber_prekey_id"] == keys.signed_prekey.prekey_id
    identity = _decode(body["identity_key"])
    assert identity == b"\x05" + keys.identity.public
    assert _decode(body["signed_prekey_public"]) == b"\x05" + keys.signed_prekey.key_pair.public
    assert _decode(body["kyber_prekey_public"]) == b"\x08" + keys.kyber_prekey.public
    assert len(_decode(body["kyber_prekey_public"])) == 1569
    for name in ("signed_prekey_signature", "kyber_prekey_signature"):
        assert len(_decode(body[name])) == 64
    assert body["signed_prekey_signature"].endswith("==")  # standard base64 keeps its padding


def test_one_time_prekeys_body(keys: PreKeys) -> None:
    body = one_time_prekeys_json(keys.one_time_prekeys[:3])
    assert list(body) == ["one_time_prekeys"]
    assert [item["prekey_id"] for item in body["one_time_prekeys"]] == [
        prekey.prekey_id for prekey in keys.one_time_prekeys[:3]
    ]
    for item, prekey in zip(body["one_time_prekeys"], keys.one_time_prekeys, strict=False):
        assert set(item) == {"prekey_id", "public_key"}
        assert _decode(item["public_key"]) == b"\x05" + prekey.key_pair.public


def test_consuming_a_one_time_prekey_returns_new_material(keys: PreKeys) -> None:
    first = keys.one_time_prekeys[0]
    assert keys.one_time_prekey_by_id(first.prekey_id) == first
    after = keys.consume_one_time_prekey(first.prekey_id)
    assert len(after.one_time_prekeys) == len(keys.one_time_prekeys) - 1
    assert keys.one_time_prekey_by_id(first.prekey_id) == first  # the original is untouched
    with pytest.raises(SignalError) as failure:
        after.one_time_prekey_by_id(first.prekey_id)
    assert failure.value.kind is SignalErrorKind.UNKNOWN_PREKEY
    with pytest.raises(SignalError) as failure:
        after.consume_one_time_prekey(first.prekey_id)
    assert failure.value.kind is SignalErrorKind.UNKNOWN_PREKEY
    with pytest.raises(FrozenInstanceError):
        keys.registration_id = 5  # type: ignore[misc]


def test_replenishing_tops_up_with_fresh_ids(keys: PreKeys) -> None:
    used = keys
    for prekey in keys.one_time_prekeys[: ONE_TIME_PREKEY_TARGET - ONE_TIME_PREKEY_LOW_WATER + 1]:
        used = used.consume_one_time_prekey(prekey.prekey_id)
    assert not keys.needs_one_time_prekeys()
    assert used.needs_one_time_prekeys()
    refilled, created = used.replenish_one_time_prekeys()
    assert len(refilled.one_time_prekeys) == ONE_TIME_PREKEY_TARGET
    assert len(created) == ONE_TIME_PREKEY_TARGET - len(used.one_time_prekeys)
    old_ids = {prekey.prekey_id for prekey in keys.one_time_prekeys}
    assert not old_ids & {prekey.prekey_id for prekey in created}
    assert refilled.one_time_prekeys[-len(created) :] == created
    assert refilled.replenish_one_time_prekeys() == (refilled, ())
    assert len(used.one_time_prekeys) < ONE_TIME_PREKEY_TARGET  # the original is untouched


def test_prekey_ids_wrap_at_24_bits_and_skip_held_ids(keys: PreKeys) -> None:
    held = keys.one_time_prekeys[0]
    start = replace(
        keys,
        one_time_prekeys=(replace(held, prekey_id=2),),
        next_one_time_prekey_id=MAX_PREKEY_ID - 1,
    )
    _, created = start.replenish_one_time_prekeys(target=5)
    assert [prekey.prekey_id for prekey in created] == [MAX_PREKEY_ID - 1, MAX_PREKEY_ID, 1, 3]


@settings(max_examples=40, deadline=None)
@given(start=st.integers(1, MAX_PREKEY_ID), held=st.sets(st.integers(1, MAX_PREKEY_ID), max_size=5))
def test_allocated_ids_are_unique_and_in_range(keys: PreKeys, start: int, held: set[int]) -> None:
    template = keys.one_time_prekeys[0]
    base = replace(
        keys,
        one_time_prekeys=tuple(replace(template, prekey_id=i) for i in sorted(held)),
        next_one_time_prekey_id=start,
    )
    refilled, _ = base.replenish_one_time_prekeys(target=12)
    ids = [prekey.prekey_id for prekey in refilled.one_time_prekeys]
    assert len(ids) == len(set(ids)) == 12
    assert all(1 <= prekey_id <= MAX_PREKEY_ID for prekey_id in ids)


def test_rotation_keeps_retired_keys_for_the_grace_period(keys: PreKeys) -> None:
    assert not keys.rotation_due(NOW + ROTATION_INTERVAL - 1)
    assert keys.rotate_if_due(NOW + ROTATION_INTERVAL - 1) is keys
    rotated_at = NOW + ROTATION_INTERVAL
    rotated = keys.rotate_if_due(rotated_at)
    old_id, new_id = keys.signed_prekey.prekey_id, rotated.signed_prekey.prekey_id
    assert new_id != old_id
    assert rotated.kyber_prekey.prekey_id == new_id
    assert rotated.identity == keys.identity
    assert rotated.registration_id == keys.registration_id
    assert rotated.one_time_prekeys == keys.one_time_prekeys
    assert rotated.signed_prekey_by_id(old_id) == keys.signed_prekey
    assert rotated.kyber_prekey_by_id(old_id) == keys.kyber_prekey
    assert rotated.bundle_json()["signed_prekey_id"] == new_id
    assert keys.signed_prekey.prekey_id == old_id  # the original is untouched

    still = rotated.rotate_if_due(rotated_at + RETIRED_GRACE - 1)
    assert still.signed_prekey_by_id(old_id) == keys.signed_prekey
    expired = rotated.drop_expired(rotated_at + RETIRED_GRACE)
    for lookup in (expired.signed_prekey_by_id, expired.kyber_prekey_by_id):
        with pytest.raises(SignalError) as failure:
            lookup(old_id)
        assert failure.value.kind is SignalErrorKind.UNKNOWN_PREKEY
    assert expired.signed_prekey_by_id(new_id) == rotated.signed_prekey


def test_json_round_trip(keys: PreKeys) -> None:
    rotated = keys.rotate(NOW + DAY).consume_one_time_prekey(keys.one_time_prekeys[3].prekey_id)
    stored = json.loads(json.dumps(rotated.to_json()))
    assert stored["version"] == 1
    assert PreKeys.from_json(stored) == rotated


def _broken(data: dict[str, Any], path: tuple[str, ...], value: object) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(data))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy


def test_malformed_state_is_refused(keys: PreKeys) -> None:
    stored = keys.to_json()
    other_public = keys.signed_prekey.key_pair.public
    cases = [
        (("registration_id",), 0),
        (("registration_id",), "12"),
        (("identity", "public"), base64.b64encode(other_public).decode()),
        (("identity", "private"), "not base64!"),
        (("signed_prekey", "signature"), base64.b64encode(bytes(63)).decode()),
        (("kyber_prekey", "public"), base64.b64encode(bytes(1567)).decode()),
        (("next_one_time_prekey_id",), MAX_PREKEY_ID + 1),
        (("one_time_prekeys",), 5),
    ]
    for path, value in cases:
        with pytest.raises(SignalError) as failure:
            PreKeys.from_json(_broken(stored, path, value))
        assert failure.value.kind is SignalErrorKind.INVALID_STATE, path
    del stored["kyber_prekey"]
    with pytest.raises(SignalError):
        PreKeys.from_json(stored)
    with pytest.raises(SignalError) as failure:
        PreKeys.from_json({**keys.to_json(), "version": 2})
    assert failure.value.kind is SignalErrorKind.UNSUPPORTED_VERSION


def test_verification_code_format() -> None:
    identity = b"\x05" + bytes(range(32))
    code = verification_code(identity)
    assert re.fullmatch(r"[0-9A-F]{4}( [0-9A-F]{4}){15}", code)
    assert code.replace(" ", "") == hashlib.sha256(identity).hexdigest().upper()
    assert code == "52C0 56BB 7839 86DC B684 337F 49BC DE8F 7E86 0346 4FDE BEDE 410C 7619 6A5A 8820"
    with pytest.raises(SignalError):
        verification_code(bytes(range(32)))


def _reference_bundle(keys: PreKeys) -> ReferenceBundle:
    one_time = one_time_prekeys_json(keys.one_time_prekeys[:1])["one_time_prekeys"][0]
    return ReferenceBundle.from_published(keys.bundle_json(), one_time)


@pytest.mark.interop
@pytest.mark.skipif(not reference_peer_available(), reason="reference peer not installed")
def test_native_peer_starts_a_session_from_our_bundle(keys: PreKeys) -> None:
    for material in (keys, keys.rotate(NOW + ROTATION_INTERVAL)):
        with ReferencePeer("human:b") as human:
            human.process_prekey_bundle("agent:a", _reference_bundle(material))
            first = human.encrypt("agent:a", b"hello agent")
            assert first[0] == 0x01
            assert first[1] == 0x44
            assert len(first) > 1569  # carries the Kyber ciphertext
