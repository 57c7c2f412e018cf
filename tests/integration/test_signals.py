"""The integration's dispatcher signals are per config entry: a listener of one agent hears
its own agent's requests and statuses, never another's."""

from homeassistant.core import HomeAssistant
from homeassistant.helpers.dispatcher import async_dispatcher_connect, async_dispatcher_send

from custom_components.pacerelle.client.values.requests import Request
from custom_components.pacerelle.signals import (
    Delivered,
    message_signal,
    message_status_signal,
    status_signal,
)


async def test_a_listener_hears_its_own_entry_only(hass: HomeAssistant) -> None:
    heard: list[str] = []
    statuses: list[tuple[str, str, str]] = []
    async_dispatcher_connect(
        hass, message_signal("one"), lambda delivered: heard.append(delivered.request.text)
    )
    async_dispatcher_connect(
        hass, message_status_signal("one"), lambda *status: statuses.append(status)
    )
    request = Request("m1", "c", "ana", "1", "agt", True, "text", "lights on", None, 1.0)
    async_dispatcher_send(hass, message_signal("two"), Delivered(request, None, None))
    async_dispatcher_send(hass, message_signal("one"), Delivered(request, None, None))
    async_dispatcher_send(hass, message_status_signal("two"), "m1", "c", "sent")
    async_dispatcher_send(hass, message_status_signal("one"), "m1", "c", "failed")
    await hass.async_block_till_done()
    assert heard == ["lights on"]
    assert statuses == [("m1", "c", "failed")]
    assert status_signal("one") != status_signal("two")
    assert Delivered(request, None, None).trust == request.judged
