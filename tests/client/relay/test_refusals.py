"""Messages refused for good are counted, warned about once per id (a redelivery only at
debug), and the ids remembered stay bounded; diagnostics get counts, never an id."""

import logging

import pytest

from custom_components.pacerelle.client.limits import MAX_REMEMBERED_REFUSALS
from custom_components.pacerelle.client.relay.frames import RefusedMessage
from custom_components.pacerelle.client.relay.refusals import GatewayRefusals


def refused(message_id: str, *, oversized: bool = False) -> RefusedMessage:
    return RefusedMessage(message_id, "conv", "ana", "device id not canonical", 80, oversized)


def test_a_redelivery_is_counted_but_warned_about_once(caplog: pytest.LogCaptureFixture) -> None:
    refusals = GatewayRefusals()
    with caplog.at_level(logging.DEBUG, "custom_components.pacerelle.client.relay.refusals"):
        refusals.record(refused("m1", oversized=True))
        refusals.record(refused("m1", oversized=True))
        refusals.record(refused("m2"))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.args[0] for r in warnings] == ["m1", "m2"]  # type: ignore[index]
    assert refusals.to_json()["total"] == 3
    assert refusals.to_json()["oversized"] == 2
    assert "m1" not in str(refusals.to_json())


def test_the_ids_remembered_are_bounded(caplog: pytest.LogCaptureFixture) -> None:
    refusals = GatewayRefusals()
    for number in range(MAX_REMEMBERED_REFUSALS + 1):
        refusals.record(refused(f"m{number}"))
    caplog.clear()
    with caplog.at_level(logging.WARNING, "custom_components.pacerelle.client.relay.refusals"):
        refusals.record(refused("m0"))  # forgotten: the oldest went first
        refusals.record(refused(f"m{MAX_REMEMBERED_REFUSALS}"))  # remembered
    assert [r.args[0] for r in caplog.records] == ["m0"]  # type: ignore[index]
