"""One question asked with a widget: which answers count, and when the wait is over.

An answer counts when it comes from the question's addressee (`Addressee`), from no blocked
device, and fits the question (`answer_problem`); whether its device is trusted is the
host's to judge, as of now. Without a response mode, and in `collective` mode, the first
answer that counts settles the question; in `individual` mode each member's first answer
is kept and the question is settled once every member known now has answered (members are
asked again at each answer: one who left is no longer waited for, nor counted).
"""

from collections.abc import Callable, Mapping
from typing import Any

from .requests import Request
from .trust_book import TrustState
from .widget_answers import Addressee, MemberAnswers, WidgetResponse, answer_problem
from .widgets import INDIVIDUAL


class Question[T]:
    """The answers that count to one question, one per member, in arrival order."""

    def __init__(
        self,
        kind: str,
        spec: Mapping[str, Any],
        *,
        response_mode: str | None,
        members: Callable[[], frozenset[str]],
    ) -> None:
        self._kind = kind
        self._spec = spec
        self._mode = response_mode
        self._members = members
        self._addressee: Addressee | None = None
        self._collected = MemberAnswers[T]()

    @property
    def each_member(self) -> bool:
        """Every member answers (`individual`), rather than the first who does."""
        return self._mode == INDIVIDUAL

    @property
    def addressed(self) -> bool:
        """Whether it is known where the question went (answers wait until it is)."""
        return self._addressee is not None

    def address(self, conversation_id: str, to: str, asked_by: str | None, owner_id: str) -> None:
        """The question went to `to` in `conversation_id` (Addressee.of), answering a
        message of `asked_by` (None: none)."""
        self._addressee = Addressee.of(conversation_id, to, asked_by, owner_id)

    @property
    def answers(self) -> list[T]:
        """The answers that counted, in arrival order (one per member)."""
        return list(self._collected.answers.values())

    def refusal(self, request: Request, response: WidgetResponse) -> str | None:
        """Why this answer never counts (its device's trust aside), or None."""
        addressee = self._addressee
        assert addressee is not None, "an answer is judged once the question is addressed"
        if self._mode is not None:
            addressee = Addressee.group(addressee.conversation_id, self._members())
        elif addressee.in_group:
            addressee = addressee.among(self._members())
        refusal = addressee.refusal(request.conversation_id, request.sender_id)
        if refusal is None and request.judged.state is TrustState.BLOCKED:
            refusal = f"device {request.sender_device_id} is blocked"
        if refusal is None and not response.cancelled:
            # Never hand a script something it could mistake for consent: wait on.
            refusal = answer_problem(self._kind, self._spec, response.value)
        return refusal

    def add(self, sender_id: str, answer: T) -> bool:
        """Count the sender's answer; False when their first one counted already."""
        return self._collected.add(sender_id, answer)

    @property
    def settled(self) -> bool:
        """Whether the answers counted so far end the wait."""
        if not self.each_member:
            return bool(self._collected.answers)
        return self._collected.complete(self._members())
