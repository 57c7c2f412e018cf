"""Which answers to a question count and when the wait is over (client/values/question.py),
without Home Assistant; the whole ask through the emulator: tests/integration/actions/."""

from dataclasses import replace

from custom_components.pacerelle.client.values.question import Question
from custom_components.pacerelle.client.values.requests import Request
from custom_components.pacerelle.client.values.trust_book import TrustState
from custom_components.pacerelle.client.values.widget_answers import WidgetResponse

OWNER, ANA, BEN = "usr_owner", "usr_ana", "usr_ben"
CHOICE = {"options": [{"id": "yes"}, {"id": "no"}]}


def _answer(sender: str, value: object, conversation: str = "conv_g") -> Request:
    widget = {"type": "widget.response", "id": f"r-{sender}", "ref": "w-1", "value": value}
    to, kind = "group:conv_g", "widget.response"
    request = Request(f"m-{sender}", conversation, sender, "1", to, True, kind, "", None, 0.0)
    return replace(request, widget=widget, trust_state=TrustState.TRUSTED)


def _response(request: Request) -> WidgetResponse:
    assert request.answer is not None
    return request.answer


def _judged(question: Question[Request], request: Request) -> str | None:
    return question.refusal(request, _response(request))


def test_the_first_answer_that_counts_settles_a_question_without_mode() -> None:
    question = Question[Request]("choice", CHOICE, response_mode=None, members=lambda: frozenset())
    assert not question.addressed
    question.address("conv_1", OWNER, None, OWNER)
    assert question.addressed
    assert not question.each_member
    assert _judged(question, _answer(OWNER, "maybe", "conv_1")) == "unknown option maybe"
    assert _judged(question, _answer(ANA, "yes", "conv_1")) is not None  # not the person asked
    assert _judged(question, _answer(OWNER, "yes", "conv_2")) is not None  # another conversation
    answer = _answer(OWNER, "yes", "conv_1")
    assert _judged(question, answer) is None
    assert not question.settled
    assert question.add(OWNER, answer)
    assert question.settled
    assert question.answers == [answer]


def test_a_blocked_device_never_counts() -> None:
    question = Question[Request]("choice", CHOICE, response_mode=None, members=lambda: frozenset())
    question.address("conv_1", OWNER, None, OWNER)
    blocked = replace(_answer(OWNER, "yes", "conv_1"), trust_state=TrustState.BLOCKED)
    assert _judged(question, blocked) == "device 1 is blocked"


def test_individual_waits_for_every_member_known_now() -> None:
    members = {ANA, BEN}
    question = Question[Request](
        "choice", CHOICE, response_mode="individual", members=lambda: frozenset(members)
    )
    question.address("conv_g", "group:conv_g", None, OWNER)
    assert question.each_member
    assert _judged(question, _answer("usr_stranger", "yes")) is not None
    assert question.add(ANA, _answer(ANA, "yes"))
    assert not question.add(ANA, _answer(ANA, "no"))  # her first answer counts
    assert not question.settled
    members.discard(BEN)  # Ben left: no longer waited for, nor counted
    assert _judged(question, _answer(BEN, "no")) is not None
    assert question.settled
