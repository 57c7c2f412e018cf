"""The SPQR authenticator: a MAC verifies under the keys and epoch that made it and nowhere
else, and an update with an epoch's secret changes both keys."""

import pytest

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind
from custom_components.pacerelle.client.signal.spqr.authenticator import Authenticator


def test_a_mac_verifies_only_where_it_was_made() -> None:
    ours = Authenticator.new(b"r" * 32, 1)
    theirs = Authenticator.new(b"r" * 32, 1)
    mac = ours.mac_ct(1, b"ciphertext")
    theirs.verify_ct(1, b"ciphertext", mac)
    for epoch, data in ((2, b"ciphertext"), (1, b"ciphertexT")):
        with pytest.raises(SignalError) as refused:
            theirs.verify_ct(epoch, data, mac)
        assert refused.value.kind is SignalErrorKind.PQ_RATCHET
    with pytest.raises(SignalError):
        theirs.verify_hdr(1, b"ciphertext", mac)  # a ciphertext MAC is no header MAC
    theirs.verify_hdr(1, b"header", ours.mac_hdr(1, b"header"))


def test_an_update_changes_both_keys() -> None:
    start = Authenticator.new(b"r" * 32, 1)
    updated = start.update(2, b"e" * 32)
    assert updated.root_key != start.root_key
    assert updated.mac_key != start.mac_key
    with pytest.raises(SignalError):
        updated.verify_ct(2, b"c", start.mac_ct(2, b"c"))
    assert Authenticator.new(b"s" * 32, 1).mac_key != start.mac_key
