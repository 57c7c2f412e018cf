"""The answers `pacerelle.ask` waits for: which count, and when the wait is over.

An answer counts when it comes from the question's addressee (client/conversations/widget_answers.py
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

from homeassistant.core import Event, HomeAssistant, callback

from ..client import Addressee, MemberAnswers, TrustState, answer_problem

_LOGGER = logging.getLogger(__name__)

INDIVIDUAL: Final = "individual"
COLLECTIVE: Final = "collective"


class AnswerWait:
    """Collects the answers to one question until it is settled (`settled`)."""

    def __init__(
        self,
        hass: HomeAssistant,
        widget_id: str,
        kind: str,
        spec: Mapping[str, Any],
        *,
        response_mode: str | None,
        members: Callable[[], frozenset[str]],
        trusted_now: Callable[[Mapping[str, Any]], bool] | None = None,
        untrusted: Callable[[Mapping[str, Any]], None] | None = None,
    ) -> None:
        self._widget_id = widget_id
        self._kind = kind
        self._spec = spec
        self._mode = response_mode
        self._members = members
        # Who may answer is known once the question is sent; answers before that wait.
        self._addressee: Addressee | None = None
        self._early: list[dict[str, Any]] = []
        self._trusted_now = trusted_now
        self._untrusted = untrusted
        self._held: list[dict[str, Any]] = []
        self.settled: asyncio.Future[None] = hass.loop.create_future()
        self.collected = MemberAnswers()

    @property
    def answers(self) -> list[Mapping[str, Any]]:
        """The answers that count, in arrival order (one per member)."""
        return list(self.collected.answers.values())

    @callback
    def addressed(self, addressee: Addressee) -> None:
        """The question went out: judge the answers that came before we knew where."""
        self._addressee = addressee
        early, self._early = self._early, []
        for data in early:
            self._consider(data)

    @callback
    def answered(self, event: Event[dict[str, Any]]) -> None:
        if self._addressee is None:
            self._early.append(dict(event.data))
        else:
            self._consider(dict(event.data))

    @callback
    def trust_changed(self) -> None:
        """A device's trust was decided: held answers now trusted are judged again."""
        if self._trusted_now is None:
            return
        held, self._held = self._held, []
        for data in held:
            if self._trusted_now(data):
                self._consider({**data, "trusted": True})
            else:
                self._held.append(data)

    @callback
    def _consider(self, data: dict[str, Any]) -> None:
        if self.settled.done():
            return
        refusal = self._refusal(data)
        if refusal is not None:
            _LOGGER.warning("Ignored an answer to widget %s: %s", self._widget_id, refusal)
            return
        if not data.get("trusted"):
            # It would count from a trusted device: held, and its sender told why.
            _LOGGER.warning(
                "Answer %s to widget %s does not count yet: device %s is %s",
                data["message_id"],
                self._widget_id,
                data["sender_device_id"],
                data.get("trust_state"),
            )
            self._held.append(data)
            if self._untrusted is not None:
                self._untrusted(data)
            return
        if not self.collected.add(data["sender_id"], data):
            _LOGGER.info(
                "Ignored a later answer to widget %s from %s: their first one counts",
                self._widget_id,
                data["sender_id"],
            )
            return
        if self._mode != INDIVIDUAL or self.collected.complete(self._members()):
            self.settled.set_result(None)

    def _refusal(self, data: Mapping[str, Any]) -> str | None:
        """Why the answer never counts (its trust aside: see `_consider`), or None."""
        addressee = self._addressee
        assert addressee is not None
        if self._mode is not None:
            addressee = Addressee.group(addressee.conversation_id, self._members())
        elif addressee.in_group:
            addressee = addressee.among(self._members())
        refusal = addressee.refusal(data["conversation_id"], data["sender_id"])
        if refusal is None and data.get("trust_state") == TrustState.BLOCKED.value:
            refusal = f"device {data['sender_device_id']} is blocked"
        if refusal is None and not data["cancelled"]:
            # Never hand a script something it could mistake for consent: wait on.
            refusal = answer_problem(self._kind, self._spec, data["value"])
        return refusal
