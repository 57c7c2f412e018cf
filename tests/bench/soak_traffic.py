"""A busy household's messages, an hour (or a few) at a time, both ways, and what became of each.

About YEARLY_MESSAGES a year at scale 1 (both directions, both agents), more by day than by
night: texts from the owners' two phones, texts in the three groups, files and voice notes,
the agents' texts (to their owners and to the groups) and widgets, each widget answered by
its person the next hour (an answer is a message in). Every message is told apart by a
unique text or id, so each month can say what was lost and what came twice:
- in: each message the emulator sent must fire exactly one event (soak_events.jsonl);
- out: each text an agent sent must be in its conversation's inbox once per device it
  reached (direct) or once per member and device (group), and in it at least once.
Latency: the bench's wall clock before the emulator's send to the event's `time_fired`
(both real time; the soak's clock moves only `time.time()` inside Home Assistant, and
`time_fired` comes from datetimes).
"""

import asyncio
import base64
import collections
import contextlib
import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.bench.soak_system import OWNERS, Household
from tests.system.harness import Agent

YEARLY_MESSAGES = 100_000
HOURS_A_YEAR = 24 * 360  # twelve months of 30 days
DAY_HOURS = range(7, 23)
DAY_WEIGHT, NIGHT_WEIGHT = 1.6, 0.2
SEND_CONCURRENCY = 6
FILE_BYTES = 3 * 1024
VOICE_BYTES = 12 * 1024
# What a message is, with its share of the traffic (a widget's answer comes with it).
KINDS = {
    "text": 0.38,
    "group text": 0.14,
    "file": 0.04,
    "voice": 0.04,
    "agent text": 0.22,
    "agent group text": 0.06,
    "widget": 0.06,
}
MESSAGE_EVENT = "pacerelle_message"


@dataclass
class Sent:
    """One message in: where to, and when the bench asked the emulator to send it."""

    conversation_id: str
    wall: float
    agents: frozenset[str]  # the agents that must fire it, each once


@dataclass
class Ledger:
    """What was sent each way, and what the event log holds (read on as it grows)."""

    events_path: Path
    inbound: dict[str, Sent] = field(default_factory=dict)
    outbound: dict[str, tuple[str, bool]] = field(default_factory=dict)  # text: (conv, group)
    fired: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    answers: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    fired_at: dict[str, float] = field(default_factory=dict)
    failures: int = 0  # pacerelle_decryption_failed events
    _offset: int = 0

    def read_events(self) -> None:
        try:
            with self.events_path.open("rb") as file:
                file.seek(self._offset)
                chunk = file.read()
        except FileNotFoundError:
            return
        end = chunk.rfind(b"\n") + 1
        self._offset += end
        for line in chunk[:end].splitlines():
            event = json.loads(line)
            if event["type"] == "pacerelle_decryption_failed":
                self.failures += 1
                continue
            message_id = event["message_id"]
            if event["type"] == MESSAGE_EVENT:
                self.fired[(event["agent_id"], message_id)] += 1
            else:  # a widget's answer fires both events, each once
                self.answers[(event["agent_id"], message_id)] += 1
            self.fired_at.setdefault(message_id, event["wall"])

    def counts(self, message_id: str) -> list[int]:
        """How many times each agent that should have fired the message did."""
        sent = self.inbound[message_id]
        return [self.fired[(agent, message_id)] for agent in sorted(sent.agents)]

    def doubled(self, message_id: str) -> bool:
        agents = self.inbound[message_id].agents
        return (
            max(
                max(self.fired[(agent, message_id)], self.answers[(agent, message_id)])
                for agent in agents
            )
            > 1
        )

    async def wait_fired(self, ids: list[str], within: float) -> None:
        async with asyncio.timeout(within):
            while True:
                self.read_events()
                if all(min(self.counts(message_id)) for message_id in ids):
                    return
                await asyncio.sleep(0.005)


@dataclass
class Traffic:
    """The household's messages: `hour` sends one simulated hour of them."""

    household: Household
    ledger: Ledger
    scale: float
    rng: random.Random = field(default_factory=lambda: random.Random(38))
    unanswered: list[tuple[Agent, str, str]] = field(default_factory=list)  # agent, widget, user
    counter: int = 0
    last_in_group: dict[str, str] = field(default_factory=dict)
    answerable: dict[str, str] = field(default_factory=dict)

    def _count(self, hour_of_day: int) -> int:
        mean_weight = (len(DAY_HOURS) * DAY_WEIGHT + (24 - len(DAY_HOURS)) * NIGHT_WEIGHT) / 24
        weight = DAY_WEIGHT if hour_of_day in DAY_HOURS else NIGHT_WEIGHT
        expected = self.scale * YEARLY_MESSAGES / HOURS_A_YEAR * weight / mean_weight
        whole = int(expected)
        return whole + (self.rng.random() < expected - whole)

    async def hours(self, hours: range, within: float) -> list[str]:
        """The messages of those hours of the day (the widgets of the hours before answered
        first); every message in fired before it returns. The ids of the messages in."""
        kinds, shares = zip(*KINDS.items(), strict=True)
        count = sum(self._count(hour) for hour in hours)
        plan = self.rng.choices(kinds, shares, k=count)
        answers, self.unanswered = self.unanswered, []
        self.answerable = dict(self.last_in_group)  # fired already, unlike this hour's
        limit = asyncio.Semaphore(SEND_CONCURRENCY)

        async def one(job: Any) -> str | None:
            async with limit:
                if isinstance(job, tuple):
                    return await self._answer(*job)
                return await self._send(job)

        results = await asyncio.gather(*(one(job) for job in [*answers, *plan]))
        ids = [message_id for message_id in results if message_id is not None]
        await self.ledger.wait_fired(ids, within)
        return ids

    async def introductions(self, within: float) -> list[str]:
        """Everyone writes once from each phone: to their agent (the owners) and to each of
        their groups, so that every conversation the agents write to is open."""
        household = self.household
        ids = []
        for number, agent in enumerate(household.agents):
            for device in ("1", "2"):
                body = {"text": self._name(f"hello from {OWNERS[number]}"), "device_id": device}
                ids.append(await self._from_person(agent.conversation_id, body))
        for group in household.groups:
            for user_id in group.members:
                for device in ("1", "2"):
                    body = {"text": self._name("hello"), "user_id": user_id, "device_id": device}
                    ids.append(await self._from_person(group.conversation_id, body))
        await self.ledger.wait_fired(ids, within)
        await self._trust_every_phone()
        return ids

    async def _trust_every_phone(self) -> None:
        """Each agent trusts every phone of the people it talks with (the codes compared, as
        a household does once): a second phone is otherwise held unverified."""
        household = self.household
        emulator = household.system.emulator
        for agent in household.agents:
            people = {OWNERS[household.agents.index(agent)]}
            for group in household.groups:
                if agent in group.agents:
                    people.update(group.members)
            for person in sorted(people):
                for device in await emulator.admin("GET", f"/users/{person}/devices"):
                    # A phone the agent never met in person (only in a group) has no
                    # decision to take: its answer is a refusal, and it stays as it is.
                    with contextlib.suppress(AssertionError):
                        await household.hass.call_service(
                            "pacerelle",
                            "trust_device",
                            {
                                "config_entry_id": agent.entry_id,
                                "person_id": person,
                                "sender_device_id": str(device["device_id"]),
                                "verification_code": device["verification_code"],
                            },
                        )

    def _name(self, kind: str) -> str:
        self.counter += 1
        return f"soak {self.counter} {kind}"

    async def _send(self, kind: str) -> str | None:
        household = self.household
        rng = self.rng
        number = rng.randrange(2)
        agent = household.agents[number]
        device = rng.choice(("1", "2"))
        if kind in ("text", "file", "voice"):
            body: dict[str, Any] = {"text": self._name(kind), "device_id": device}
            if kind != "text":
                size, mime = (
                    (FILE_BYTES, "application/pdf")
                    if kind == "file"
                    else (
                        VOICE_BYTES,
                        "audio/ogg",
                    )
                )
                item: dict[str, Any] = {
                    "data_b64": base64.b64encode(rng.randbytes(size)).decode(),
                    "name": "note.ogg" if kind == "voice" else "bill.pdf",
                    "mime": mime,
                }
                if kind == "voice":
                    item["duration_ms"] = 4000
                body["attachments"] = [item]
            return await self._from_person(agent.conversation_id, body)
        if kind == "group text":
            group = rng.choice(household.groups)
            body = {"text": self._name(kind), "user_id": rng.choice(group.members)}
            body["device_id"] = device
            return await self._from_person(group.conversation_id, body)
        if kind == "agent group text":
            group = rng.choice(household.groups)
            agent = rng.choice(group.agents)
            text = self._name(kind)
            self.ledger.outbound[text] = (group.conversation_id, True)
            # An answer to the group's last message: what an automation on its event does.
            data = {"config_entry_id": agent.entry_id, "text": text}
            data["source_message_id"] = self.answerable[group.conversation_id]
            await household.hass.call_service("pacerelle", "send_message", data)
            return None
        text = self._name(kind)
        if kind == "agent text":
            self.ledger.outbound[text] = (agent.conversation_id, False)
            await household.hass.call_service(
                "pacerelle", "send_message", {"config_entry_id": agent.entry_id, "text": text}
            )
            return None
        widget_id = f"w{self.counter}"
        widget = {
            "type": "widget.standard",
            "v": 1,
            "id": widget_id,
            "kind": "confirm",
            "spec": {"title": text},
        }
        await household.hass.call_service(
            "pacerelle", "send_widget", {"config_entry_id": agent.entry_id, "widget": widget}
        )
        self.unanswered.append((agent, widget_id, OWNERS[number]))
        return None

    async def _answer(self, agent: Agent, widget_id: str, user_id: str) -> str:
        body = {"widget_response": {"ref": widget_id, "value": True}, "device_id": "1"}
        del user_id  # the owner answers on the conversation of the agent
        return await self._from_person(agent.conversation_id, body)

    def _agents_in(self, conversation_id: str) -> frozenset[str]:
        household = self.household
        for group in household.groups:
            if group.conversation_id == conversation_id:
                return frozenset(agent.agent_id for agent in group.agents)
        return frozenset(
            agent.agent_id for agent in household.agents if agent.conversation_id == conversation_id
        )

    async def _from_person(self, conversation_id: str, body: dict[str, Any]) -> str:
        wall = time.time()
        message_id = await self.household.system.emulator.send(conversation_id, **body)
        if "user_id" in body:
            self.last_in_group[conversation_id] = message_id
        self.ledger.inbound[message_id] = Sent(
            conversation_id, wall, self._agents_in(conversation_id)
        )
        return message_id
