"""The answers `pacerelle.ask` waits for, until the question is settled.

Which answers count and when the wait is over is the client's rule (`Question`,
client/values/question.py); here an answer also needs a trusted device (trust.py), and
answers that come before the question went out wait until it has.

An answer refused only because its device is not trusted yet is held: its sender is told
why (`untrusted`, once per answer), and it is judged again when a trust decision is made
(`trust_changed`), so trusting the device while the question is open makes it count.
"""

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect

from ..client import Question
from ..signals import WidgetAnswer, widget_answer_signal

_LOGGER = logging.getLogger(__name__)


class AnswerWait:
    """Collects the answers to one question until it is settled (`settled`): requests
    the agent accepted (signals.py `WidgetAnswer`), each judged when it was opened."""

    def __init__(
        self,
        hass: HomeAssistant,
        widget_id: str,
        kind: str,
        spec: Mapping[str, Any],
        *,
        response_mode: str | None,
        members: Callable[[], frozenset[str]],
        trusted_now: Callable[[WidgetAnswer], bool] | None = None,
        untrusted: Callable[[WidgetAnswer], None] | None = None,
    ) -> None:
        self._widget_id = widget_id
        # Who may answer is known once the question is sent; answers before that wait.
        self.question = Question[WidgetAnswer](
            kind, spec, response_mode=response_mode, members=members
        )
        self._early: list[WidgetAnswer] = []
        self._trusted_now = trusted_now
        self._untrusted = untrusted
        self._held: list[WidgetAnswer] = []
        self._hass = hass
        self.settled: asyncio.Future[None] = hass.loop.create_future()

    @property
    def answers(self) -> list[WidgetAnswer]:
        """The answers that count, in arrival order (one per member)."""
        return self.question.answers

    @callback
    def addressed(self, conversation_id: str, to: str, asked_by: str | None, owner_id: str) -> None:
        """The question went out (`Question.address`): judge the answers that came before
        we knew where."""
        self.question.address(conversation_id, to, asked_by, owner_id)
        early, self._early = self._early, []
        for answer in early:
            self._consider(answer)

    @callback
    def listen(self, entry_id: str) -> CALLBACK_TYPE:
        """Take the entry's answers to this widget until the returned callback is called:
        from the agent (signals.py), never the bus, where anyone may fire a
        `pacerelle_widget_response`."""

        @callback
        def answered(answer: WidgetAnswer) -> None:
            if answer.response.ref == self._widget_id:
                self.answered(answer)

        return async_dispatcher_connect(self._hass, widget_answer_signal(entry_id), answered)

    @callback
    def answered(self, answer: WidgetAnswer) -> None:
        """An answer to this question."""
        if not self.question.addressed:
            self._early.append(answer)
        else:
            self._consider(answer)

    @callback
    def trust_changed(self) -> None:
        """A device's trust was decided: held answers now trusted are judged again."""
        if self._trusted_now is None:
            return
        held, self._held = self._held, []
        for answer in held:
            if self._trusted_now(answer):
                self._consider(answer, trusted=True)
            else:
                self._held.append(answer)

    @callback
    def _consider(self, answer: WidgetAnswer, *, trusted: bool | None = None) -> None:
        if self.settled.done():
            return
        request = answer.request
        refusal = self.question.refusal(request, answer.response)
        if refusal is not None:
            _LOGGER.warning("Ignored an answer to widget %s: %s", self._widget_id, refusal)
            return
        if not (request.judged.trusted if trusted is None else trusted):
            # It would count from a trusted device: held, and its sender told why.
            _LOGGER.warning(
                "Answer %s to widget %s does not count yet: device %s is %s",
                request.message_id,
                self._widget_id,
                request.sender_device_id,
                request.judged.state.value,
            )
            self._held.append(answer)
            if self._untrusted is not None:
                self._untrusted(answer)
            return
        if not self.question.add(request.sender_id, answer):
            _LOGGER.info(
                "Ignored a later answer to widget %s from %s: their first one counts",
                self._widget_id,
                request.sender_id,
            )
            return
        if self.question.settled:
            self.settled.set_result(None)
