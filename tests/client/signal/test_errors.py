"""The engine's one error type: its kind is kept apart from its detail, and the kinds are
stable strings (logs, the store and the integration's diagnostics name them)."""

from custom_components.pacerelle.client.signal.errors import SignalError, SignalErrorKind


def test_an_error_carries_its_kind_and_detail() -> None:
    error = SignalError(SignalErrorKind.INVALID_MAC, "the MAC of message 3")
    assert error.kind is SignalErrorKind.INVALID_MAC
    assert error.detail == "the MAC of message 3"
    assert str(error) == "invalid_mac: the MAC of message 3"


def test_kinds_are_distinct_stable_strings() -> None:
    values = [kind.value for kind in SignalErrorKind]
    assert len(set(values)) == len(values)
    assert SignalErrorKind("untrusted_identity") is SignalErrorKind.UNTRUSTED_IDENTITY
    assert all(value == value.lower() and " " not in value for value in values)
