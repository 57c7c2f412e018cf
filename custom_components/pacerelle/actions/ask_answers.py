"""The answers `pacerelle.ask` waits for: which count, and when the wait is over.

An answer counts when it comes from the question's addressee (client/values/widget_answers.py
`Addressee`), from a trusted device (trust.py), and fits the question. Without a response
mode, and in `collective` mode, the first answer that counts settles the question; in
`individual` mode each member's first answer is kept and the wait is over once every
member known now has answered (members are recomputed at each answer: a member who
leaves meanwhile is no longer waited for, and their answer no longer counts). Asked in a
group without a mode, the person asked must still be a member when they answer.

An answer refused only because its device is not trusted yet is held: its sender is told
why (`untrusted`, once per answer), and it is judged again when a trust decision is made
(`trust_changed`), so trusting the device while the question is open makes it count.
"""

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any, Final

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect

from ..client import Addressee, MemberAnswers, TrustState, answer_problem
from ..signals import WidgetAnswer, widget_answer_signal

_LOGGER = logging.getLogger(__name__)

INDIVIDUAL: Final = "individual"
COLLECTIVE: Final = "collective"


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
        self._kind = kind
        self._spec = spec
        self._mode = response_mode
        self._members = members
        # Who may answer is known once the question is sent; answers before that wait.
        self._addressee: Addressee | None = None
        self._early: list[WidgetAnswer] = []
        self._trusted_now = trusted_now
        self._untrusted = untrusted
        self._held: list[WidgetAnswer] = []
        self._hass = hass
        self.settled: asyncio.Future[None] = hass.loop.create_future()
        self.collected = MemberAnswers[WidgetAnswer]()

    @property
    def answers(self) -> list[WidgetAnswer]:
        """The answers that count, in arrival order (one per member)."""
        return list(self.collected.answers.values())

    @callback
    def addressed(self, addressee: Addressee) -> None:
        """The question went out: judge the answers that came before we knew where."""
        self._addressee = addressee
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
        if self._addressee is None:
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
        refusal = self._refusal(answer)
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
        if not self.collected.add(request.sender_id, answer):
            _LOGGER.info(
                "Ignored a later answer to widget %s from %s: their first one counts",
                self._widget_id,
                request.sender_id,
            )
            return
        if self._mode != INDIVIDUAL or self.collected.complete(self._members()):
            self.settled.set_result(None)

    def _refusal(self, answer: WidgetAnswer) -> str | None:
        """Why the answer never counts (its trust aside: see `_consider`), or None."""
        addressee = self._addressee
        assert addressee is not None
        request = answer.request
        if self._mode is not None:
            addressee = Addressee.group(addressee.conversation_id, self._members())
        elif addressee.in_group:
            addressee = addressee.among(self._members())
        refusal = addressee.refusal(request.conversation_id, request.sender_id)
        if refusal is None and request.judged.state is TrustState.BLOCKED:
            refusal = f"device {request.sender_device_id} is blocked"
        if refusal is None and not answer.response.cancelled:
            # Never hand a script something it could mistake for consent: wait on.
            refusal = answer_problem(self._kind, self._spec, answer.value)
        return refusal
