"""The trust door's two decisions, for any sequence of what the relay and the user do
(client/trust/door.py): nothing is sealed for a key the user did not trust (or that he
blocked, under any device id), and no request of such a key is judged trusted to act.

Pure and fast: the door and its SealRule, no relay. The relay announces devices and keys
at will (a message from any (person, device, key)), the user decides about what he was
shown, and the agent tries to seal for any session, with or without a request to answer.
The model the door is checked against is the user's decisions alone.
"""

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from custom_components.pacerelle.client.errors import SendError
from custom_components.pacerelle.client.trust.door import TrustDoor
from custom_components.pacerelle.client.values.requests import Request
from custom_components.pacerelle.client.values.trust_book import TrustState

OWNER, GUEST = "u-owner", "u-guest"
PEOPLE = st.sampled_from((OWNER, GUEST))
DEVICES = st.sampled_from(("1", "2", "3"))
KEYS = st.sampled_from(tuple(bytes([5, n]) * 16 for n in range(3)))


@dataclass(frozen=True)
class Message:
    """The relay delivers a message from (person, device, key)."""

    person: str
    device: str
    key: bytes


@dataclass(frozen=True)
class Decide:
    """The user decides about the device's current key."""

    person: str
    device: str
    state: TrustState


@dataclass(frozen=True)
class Seal:
    """The agent seals, without a request, for the session with (person, device, key)."""

    person: str
    device: str
    key: bytes


@dataclass(frozen=True)
class Answer:
    """The agent answers a request it handed over, on a session presenting `key`."""

    chosen: int
    key: bytes


DECISIONS = st.sampled_from((TrustState.TRUSTED, TrustState.BLOCKED))
STEPS = st.lists(
    st.one_of(
        st.builds(Message, PEOPLE, DEVICES, KEYS),
        st.builds(Decide, PEOPLE, DEVICES, DECISIONS),
        st.builds(Seal, PEOPLE, DEVICES, KEYS),
        st.builds(Answer, st.integers(0, 50), KEYS),
    ),
    max_size=60,
)


@dataclass
class Model:
    """What the user decided: a decision is about a key (the relay can present it under any
    device id of the person), the latest one winning; a device id blocked stays blocked
    whatever key it presents, until the key it was blocked with is trusted again."""

    decisions: dict[tuple[str, bytes], TrustState] = field(default_factory=dict)
    blocked_devices: set[tuple[str, str]] = field(default_factory=set)
    owner_seen: bool = False

    def may_read(self, person: str, device: str, key: bytes) -> bool:
        """Whether the user's decisions allow this key to read (or a request of it to act)."""
        trusted = self.decisions.get((person, key)) is TrustState.TRUSTED
        return trusted and (person, device) not in self.blocked_devices

    def not_blocked(self, person: str, device: str, key: bytes) -> bool:
        blocked = self.decisions.get((person, key)) is TrustState.BLOCKED
        return not blocked and (person, device) not in self.blocked_devices


def _request(index: int, step: Message) -> Request:
    return Request(
        f"m{index}", "c1", step.person, step.device, "a1", True, "text", "hi", None, 1.0,
        sender_identity=step.key, trust_device_id=step.device,
    )  # fmt: skip


@dataclass
class Run:
    door: TrustDoor = field(default_factory=lambda: TrustDoor(OWNER))
    model: Model = field(default_factory=Model)
    requests: list[Request] = field(default_factory=list)

    def message(self, index: int, step: Message) -> None:
        model, door = self.model, self.door
        first_owner = step.person == OWNER and not model.owner_seen
        if first_owner and door.book.get(step.person, step.device) is None:
            model.decisions[(step.person, step.key)] = TrustState.TRUSTED  # on first use
        model.owner_seen = model.owner_seen or step.person == OWNER
        judged = door.judge_request(_request(index, step), float(index))
        if judged.trust_state is TrustState.TRUSTED:
            assert model.may_read(step.person, step.device, step.key), (judged, model)
        if not model.not_blocked(step.person, step.device, step.key):
            assert judged.trust_state is TrustState.BLOCKED
        if judged.trust_state is not TrustState.BLOCKED:
            self.requests.append(judged)  # what consumers could get: never a blocked one

    def decide(self, step: Decide) -> None:
        model = self.model
        known = self.door.book.get(step.person, step.device)
        if known is None or known.identity_key is None:
            return
        before = self.door.book
        self.door.decide(step.person, step.device, step.state, key=known.identity_key)
        person, key = step.person, known.identity_key
        model.decisions[(person, key)] = step.state
        sharing = {
            (person, d.device_id)
            for d in before.devices.values()
            if d.person_id == person and d.identity_key == key
        } | {(person, step.device)}
        if step.state is TrustState.BLOCKED:
            model.blocked_devices |= sharing
        else:
            model.blocked_devices -= sharing

    def seal(self, step: Seal) -> None:
        try:
            self.door.seal_rule().check_direct(step.person, step.device, step.key)
        except SendError:
            return
        assert self.model.may_read(step.person, step.device, step.key), ("sealed for", step)

    def answer(self, step: Answer) -> None:
        if not self.requests:
            return
        asked = self.requests[step.chosen % len(self.requests)]
        try:
            rule = self.door.seal_rule(asked)
            rule.check_direct(asked.sender_id, asked.sender_device_id, step.key)
        except SendError:
            return
        # An answer: only the key that wrote the request, never a blocked one.
        assert step.key == asked.sender_identity
        assert self.model.not_blocked(asked.sender_id, asked.sender_device_id, step.key)


@settings(max_examples=1000, deadline=None)
@given(STEPS)
def test_nothing_sealed_for_or_acting_from_a_key_the_user_did_not_trust(
    plan: list[Message | Decide | Seal | Answer],
) -> None:
    run = Run()
    for index, step in enumerate(plan):
        match step:
            case Message():
                run.message(index, step)
            case Decide():
                run.decide(step)
            case Seal():
                run.seal(step)
            case Answer():
                run.answer(step)
