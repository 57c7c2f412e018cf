"""The outbox's confirmation rule (outbox.py docstring), clock by clock: confirmed after the
window on an open connection, failed on the relay's ERROR, uncertain when the connection
ends otherwise inside the window, nothing uncertain after a clean close."""

from custom_components.pacerelle.client.outbox.confirmations import CONFIRM_WINDOW, Outbox, Written


def _outbox(*sends: Written) -> Outbox:
    outbox = Outbox()
    for send in sends:
        outbox.written(send)
    return outbox


def test_settle_confirms_only_sends_past_the_window() -> None:
    old, new = Written("m-old", "c", 1, 0.0), Written("m-new", "c", 1, 2.0)
    outbox = _outbox(old, new)
    outbox.settle(CONFIRM_WINDOW)  # m-old has exactly the window behind it: confirmed
    assert outbox.failed("m-old") is None  # gone: an ERROR for it now changes nothing
    assert outbox.failed("m-new") == new


def test_an_error_fails_a_send_once() -> None:
    send = Written("m-1", "c", 1, 0.0)
    outbox = _outbox(send)
    assert outbox.failed("m-1") == send
    assert outbox.failed("m-1") is None
    assert outbox.failed("m-never-written") is None


def test_a_dropped_connection_makes_its_recent_sends_uncertain() -> None:
    recent = Written("m-recent", "c", 1, 9.0)
    settled = Written("m-settled", "c", 1, 0.0)  # past the window, not yet settled
    other = Written("m-other", "c", 2, 9.5)  # on the next connection: untouched
    outbox = _outbox(recent, settled, other)
    assert outbox.connection_ended(1, 10.0, clean=False) == [recent]
    assert outbox.failed("m-settled") is None  # forgotten, not uncertain
    assert outbox.failed("m-other") == other


def test_a_clean_close_leaves_nothing_uncertain() -> None:
    outbox = _outbox(Written("m-1", "c", 1, 9.9))
    assert outbox.connection_ended(1, 10.0, clean=True) == []
    assert outbox.failed("m-1") is None
