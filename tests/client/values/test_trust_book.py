"""The trust rules in one place (client/values/trust_book.py), without Home Assistant."""

import pytest

from custom_components.pacerelle.client.values.trust_book import (
    MAX_TRUST_RECORDS,
    DeviceTrust,
    KeyChangedError,
    TrustBook,
    TrustState,
)

OWNER = "usr_owner"
KEY_A, KEY_B, KEY_C = (bytes([5]) + bytes([n]) * 32 for n in (1, 2, 3))


def seen(book: TrustBook, person: str, device: str, key: bytes | None) -> TrustBook:
    return book.observe(person, device, key, OWNER, 1.0)[0]


def test_first_owner_device_then_others() -> None:
    book = seen(TrustBook(), OWNER, "1", KEY_A)
    assert book.get(OWNER, "1").state is TrustState.TRUSTED  # trust on first use
    # A second device with the same key (shared identity) is trusted; a new key is not.
    assert book.judge(OWNER, "2", KEY_A, OWNER).state is TrustState.TRUSTED
    assert book.judge(OWNER, "3", KEY_B, OWNER).state is TrustState.UNVERIFIED
    # Another person never gets trust on first use, not even with the owner's key.
    assert book.judge("usr_guest", "1", KEY_A, OWNER).state is TrustState.UNVERIFIED
    # Without a Signal session there is no key to trust.
    assert book.judge(OWNER, "1", None, OWNER).state is TrustState.UNVERIFIED


def test_no_second_trust_on_first_use() -> None:
    book = seen(TrustBook(), OWNER, "1", KEY_A)
    book = book.decided(OWNER, "1", TrustState.BLOCKED, key=KEY_A)
    # The owner is known: a new device is unverified even with no device trusted any more.
    assert book.judge(OWNER, "2", KEY_B, OWNER).state is TrustState.UNVERIFIED


def test_changed_blocked_and_confirmed() -> None:
    book = seen(TrustBook(), OWNER, "1", KEY_A)
    book, changed = book.observe(OWNER, "1", KEY_B, OWNER, 2.0)
    assert changed.state is TrustState.CHANGED
    assert book.judge(OWNER, "1", KEY_C, OWNER).state is TrustState.CHANGED  # until confirmed
    book = book.decided(OWNER, "1", TrustState.TRUSTED, key=KEY_B)
    assert book.judge(OWNER, "1", KEY_B, OWNER).state is TrustState.TRUSTED
    book = book.decided(OWNER, "1", TrustState.BLOCKED, key=KEY_B)
    assert book.judge(OWNER, "1", KEY_C, OWNER).state is TrustState.BLOCKED


def test_migration_and_round_trip() -> None:
    book = TrustBook.seeded([(OWNER, "1", KEY_A), ("usr_guest", "1", KEY_B)], OWNER, 1.0)
    assert book.get(OWNER, "1").state is TrustState.TRUSTED
    assert book.get("usr_guest", "1").state is TrustState.UNVERIFIED
    assert TrustBook.from_json(book.to_json()) == book


def test_a_relay_inventing_devices_cannot_grow_the_book() -> None:
    book = seen(TrustBook(), OWNER, "1", KEY_A)
    for n in range(MAX_TRUST_RECORDS + 50):
        book = book.observe("usr_x", str(n + 2), KEY_B, OWNER, 10.0 + n)[0]
    assert len(book.devices) == MAX_TRUST_RECORDS
    # The oldest record, but a decision: kept, so no invented device gets trust on first use.
    assert book.get(OWNER, "1").state is TrustState.TRUSTED
    assert book.judge(OWNER, "99999", KEY_C, OWNER).state is TrustState.UNVERIFIED


def test_a_decision_binds_to_the_key_it_was_shown_for() -> None:
    book = seen(TrustBook(), OWNER, "1", KEY_A)
    book = seen(book, OWNER, "2", KEY_B)  # unverified, its code shown to the user
    shown = book.get(OWNER, "2")
    book = seen(book, OWNER, "2", KEY_C)  # the relay swaps the key before the decision
    for state in (TrustState.TRUSTED, TrustState.BLOCKED):
        with pytest.raises(KeyChangedError) as refused:
            book.decided(OWNER, "2", state, key=shown.identity_key)
        assert refused.value.current == book.get(OWNER, "2")
    assert book.get(OWNER, "2").state is TrustState.UNVERIFIED  # nothing decided
    assert book.decided(OWNER, "2", TrustState.TRUSTED, key=KEY_C).get(OWNER, "2").trusted
    with pytest.raises(KeyError):
        book.decided(OWNER, "9", TrustState.TRUSTED, key=KEY_A)


def test_codes_compare_without_spaces_or_case() -> None:
    device = seen(TrustBook(), OWNER, "1", KEY_A).devices[f"{OWNER}|1"]
    code = device.code
    assert device.shows_code(code.replace(" ", "").lower())
    assert device.shows_code(f"  {code}\n")
    assert not device.shows_code(code[:-1] + ("0" if code[-1] != "0" else "1"))
    keyless = DeviceTrust(OWNER, "2", None, TrustState.UNVERIFIED)
    assert not keyless.shows_code("")  # a device without a key shows no code to confirm


def test_a_decision_belongs_to_the_key_under_every_device_id() -> None:
    """A book from before decisions followed the key may hold one key trusted under one
    device id and blocked under another: blocked wins. A new decision, trust or block, is
    the key's: every record of the person sharing it takes it, the latest one winning."""
    key = b"\x05" + bytes([7]) * 32
    mixed = TrustBook(
        {
            "u-1|1": DeviceTrust("u-1", "1", key, TrustState.TRUSTED),
            "u-1|3": DeviceTrust("u-1", "3", key, TrustState.BLOCKED),
        }
    )
    assert mixed.readable("u-1", "1", key) is TrustState.BLOCKED
    trusted = mixed.decided("u-1", "1", TrustState.TRUSTED, key=key)
    assert {d.state for d in trusted.devices.values()} == {TrustState.TRUSTED}
    blocked = trusted.decided("u-1", "3", TrustState.BLOCKED, key=key)
    assert {d.state for d in blocked.devices.values()} == {TrustState.BLOCKED}
    assert blocked.readable("u-1", "1", key) is TrustState.BLOCKED
