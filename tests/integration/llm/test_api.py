"""The Pacerelle LLM API through llm.async_get_api, with the emulator's human on the other side."""

import asyncio
import json
import time

import probatio
import pytest
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.setup import async_setup_component

from custom_components.pacerelle.const import DOMAIN
from custom_components.pacerelle.llm.api import API_PROMPT
from tests.helpers.agent import start_agent
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.llm import LLM_CONTEXT, TOOLS, call, held, human_says, owner_asks
from tests.helpers.widget_specs import widget

CONFIRM = widget("confirm", {"title": "Unlock the door?"}, "confirm-1")


async def test_api_is_listed_with_the_mcp_servers_tools(hass: HomeAssistant) -> None:
    assert await async_setup_component(hass, DOMAIN, {})
    apis = {api.id: api for api in llm.async_get_apis(hass)}
    assert apis["pacerelle"].name == "Pacerelle"
    instance = await llm.async_get_api(hass, "pacerelle", LLM_CONTEXT)
    assert {tool.name for tool in instance.tools} == TOOLS
    assert instance.api_prompt.startswith(API_PROMPT)
    assert "No Pacerelle agent is loaded" in instance.api_prompt
    for tool in instance.tools:
        assert tool.integration == DOMAIN
        # What conversation agents and the MCP server send to models: every schema converts.
        schema = probatio.to_openapi(
            tool.parameters, custom_serializer=llm.selector_serializer, openapi_version="3.1.0"
        )
        assert "agent" in schema["properties"]
    wait = next(tool for tool in instance.tools if tool.name == "wait_for_messages")
    properties = probatio.to_openapi(wait.parameters)["properties"]
    assert properties["timeoutMs"]["minimum"] == 0
    assert properties["timeoutMs"]["maximum"] == 30000
    assert properties["timeoutMs"]["default"] == 25000
    assert (properties["limit"]["minimum"], properties["limit"]["maximum"]) == (1, 50)

    with pytest.raises(HomeAssistantError, match="No Pacerelle agent is loaded"):
        await call(hass, "get_status")


async def test_request_answered_and_processed_through_the_tools(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    installed, runtime, conversation = agent.installed, agent.runtime, agent.conversation_id

    status = await call(hass, "get_status")
    assert status["connection"] == "connected"
    assert (status["pending"], status["uncertain_sends"]) == (0, [])
    assert status["agent"] == {"id": installed.agent_id, "name": "Home"}
    assert await call(hass, "get_current_conversation") == {"conversation": None}

    message_id = await human_says(emulator, runtime, conversation, "Is the door locked?")
    first = await call(hass, "wait_for_messages", timeoutMs=0)
    assert first["connection"] == "connected"
    assert first["has_more"] is False
    [message] = first["messages"]
    assert (message["message_id"], message["text"]) == (message_id, "Is the door locked?")
    assert (message["sender_id"], message["conversation_id"]) == (installed.owner_id, conversation)
    # Waiting never marks processed: the same request comes back without a cursor.
    assert (await call(hass, "wait_for_messages", timeoutMs=0))["messages"] == [message]
    # Models that send omitted arguments as null are understood.
    nulls = await call(hass, "wait_for_messages", timeoutMs=0, afterCursor=None, limit=None)
    assert nulls["messages"] == [message]
    current = (await call(hass, "get_current_conversation"))["conversation"]
    assert (current["conversation_id"], current["pending"]) == (conversation, 1)
    assert current["last_message_id"] == message_id

    sent = await call(hass, "send_message", text="Yes, locked.", sourceMessageId=message_id)
    assert sent["conversation_id"] == conversation
    assert sent["to"] == installed.owner_id
    [received] = await emulator.wait_inbox(conversation, 1)
    assert (received["message_id"], received["text"]) == (sent["message_id"], "Yes, locked.")
    assert received["history"] == "valid"
    assert received["reply_to_message_id"] == message_id
    assert (await call(hass, "get_status"))["pending"] == 1  # replying doesn't mark it

    note = "n" * 2000
    done = await call(hass, "mark_processed", messageId=message_id, note=note)
    assert done["processed"]["message_id"] == message_id
    assert (await call(hass, "get_status"))["pending"] == 0
    assert (await call(hass, "wait_for_messages", timeoutMs=0))["messages"] == []
    history = await call(hass, "get_history", conversationId=conversation)
    [handled] = history["requests"]
    assert (handled["message_id"], handled["note"]) == (message_id, note)
    assert handled["processed_at"] is not None
    assert [reply["message_id"] for reply in history["replies"]] == [sent["message_id"]]
    with pytest.raises(HomeAssistantError, match="outside what the Pacerelle LLM API"):
        await call(hass, "get_history", conversationId="conv_other")
    # Whatever a model gets is JSON (what the MCP server and chat log serialise).
    json.dumps(history)

    with pytest.raises(HomeAssistantError, match="no such request"):
        await call(hass, "mark_processed", messageId=message_id)

    # Explicit targets, for advanced use, and a link to an earlier message.
    explicit = await call(
        hass,
        "send_message",
        text="Also: the garage is open.",
        conversationId=conversation,
        to=installed.owner_id,
        replyToMessageId=sent["message_id"],
    )
    latest = (await emulator.wait_inbox(conversation, 2))[1]
    assert (latest["message_id"], latest["text"]) == (
        explicit["message_id"],
        "Also: the garage is open.",
    )
    assert latest["reply_to_message_id"] == sent["message_id"]
    newest = await call(hass, "get_history", limit=1)
    assert [reply["message_id"] for reply in newest["replies"]] == [explicit["message_id"]]
    with pytest.raises(HomeAssistantError, match="may not write to usr_nobody"):
        await call(hass, "send_message", text="hi", conversationId=conversation, to="usr_nobody")


async def test_wait_returns_when_a_request_arrives_and_times_out_otherwise(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    installed = (await start_agent(hass, emulator)).installed
    started = time.monotonic()
    empty = await call(hass, "wait_for_messages", timeoutMs=300)
    assert time.monotonic() - started >= 0.3
    assert (empty["messages"], empty["has_more"], empty["cursor"]) == ([], False, None)

    waiting = asyncio.create_task(call(hass, "wait_for_messages", timeoutMs=20000))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    started = time.monotonic()
    message_id = await emulator.send(installed.conversation_id, text="hello")
    result = await asyncio.wait_for(waiting, 10)
    assert time.monotonic() - started < 5
    assert [message["message_id"] for message in result["messages"]] == [message_id]


async def test_limit_cursor_and_conversation_filter(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent = await start_agent(hass, emulator)
    runtime, conversation = agent.runtime, agent.conversation_id
    ids = [await human_says(emulator, runtime, conversation, f"m{n}") for n in range(3)]

    page = await call(hass, "wait_for_messages", timeoutMs=0, limit=2)
    assert [m["message_id"] for m in page["messages"]] == ids[:2]
    assert page["has_more"] is True
    # The cursor survives its request being marked processed.
    await call(hass, "mark_processed", messageId=ids[1])
    rest = await call(hass, "wait_for_messages", timeoutMs=0, afterCursor=page["cursor"])
    assert [m["message_id"] for m in rest["messages"]] == ids[2:]
    assert rest["has_more"] is False
    end = await call(hass, "wait_for_messages", timeoutMs=0, afterCursor=rest["cursor"])
    assert (end["messages"], end["cursor"]) == ([], rest["cursor"])
    # Without a cursor, the unfinished first request is still there.
    again = await call(hass, "wait_for_messages", timeoutMs=0, limit=50)
    assert [m["message_id"] for m in again["messages"]] == [ids[0], ids[2]]
    only = await call(hass, "wait_for_messages", timeoutMs=0, conversationId=conversation)
    assert len(only["messages"]) == 2
    # Another conversation is out of the LLM API's scope
    # (tests/integration/llm/test_tools_scope.py).
    with pytest.raises(HomeAssistantError, match="outside what the Pacerelle LLM API"):
        await call(hass, "wait_for_messages", timeoutMs=0, conversationId="conv_nobody")

    with pytest.raises(HomeAssistantError, match="not a cursor"):
        await call(hass, "wait_for_messages", timeoutMs=0, afterCursor="not-a-cursor")


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("wait_for_messages", {"timeoutMs": 30001}),
        ("wait_for_messages", {"timeoutMs": -1}),
        ("wait_for_messages", {"limit": 0}),
        ("wait_for_messages", {"limit": 51}),
        ("wait_for_messages", {"timeout_ms": 10}),
        ("get_history", {"limit": 51}),
        ("send_message", {}),
        ("send_message", {"text": ""}),
        ("send_message", {"text": "x" * (64 * 1024 + 1)}),
        ("mark_processed", {"messageId": "m", "note": "n" * 2001}),
        ("mark_processed", {}),
        ("save_checkpoint", {"sourceMessageId": "m", "summary": "s"}),
        (
            "save_checkpoint",
            {"sourceMessageId": "m", "summary": "s", "nextAction": "a", "status": "done"},
        ),
        ("save_checkpoint", {"sourceMessageId": "m", "summary": "s" * 2001, "nextAction": "a"}),
        ("get_checkpoints", {"includeCompleted": "maybe"}),
        ("send_widget", {"widgetJson": 5}),
    ],
)
async def test_bad_arguments_are_refused(
    hass: HomeAssistant, emulator: EmulatorHandle, tool: str, args: dict[str, object]
) -> None:
    await start_agent(hass, emulator)
    with pytest.raises(probatio.Invalid):
        await call(hass, tool, **args)


async def test_refusals_say_what_is_wrong(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent = await start_agent(hass, emulator)
    with pytest.raises(HomeAssistantError, match="not written to the agent yet"):
        await call(hass, "send_message", text="hello")
    with pytest.raises(HomeAssistantError, match="no such request"):
        await call(hass, "send_message", text="hello", sourceMessageId="nope")
    with pytest.raises(HomeAssistantError, match="kind: must be one of"):
        await call(hass, "send_widget", widgetJson={**CONFIRM, "kind": "slider"})
    with pytest.raises(HomeAssistantError, match="not valid JSON"):
        await call(hass, "send_widget", widgetJson="{nope")
    with pytest.raises(HomeAssistantError, match="called Cottage"):
        await call(hass, "get_status", agent="Cottage")

    runtime = agent.runtime
    message_id = await human_says(emulator, runtime, agent.conversation_id, "hi")
    await runtime.agent.stop()
    with pytest.raises(HomeAssistantError, match="not connected"):
        await call(hass, "send_message", text="hello", sourceMessageId=message_id)
    assert (await call(hass, "get_status"))["connection"] == "stopped"


async def test_widget_sent_and_its_answer_read(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    agent, message_id = await owner_asks(hass, emulator, "Open the door")
    runtime, conversation = agent.runtime, agent.conversation_id
    assert await call(hass, "get_pending_widget") == {"widget_answer": None}

    sent = await call(hass, "send_widget", widgetJson=CONFIRM, sourceMessageId=message_id)
    assert sent["widget_id"] == "confirm-1"
    as_text = {**CONFIRM, "id": "confirm-2"}
    await call(hass, "send_widget", widgetJson=json.dumps(as_text), sourceMessageId=message_id)
    inbox = await emulator.wait_inbox(conversation, 2)
    assert [entry["kind"] for entry in inbox] == ["widget.standard", "widget.standard"]
    assert json.loads(inbox[0]["text"]) == CONFIRM

    answer_id = await emulator.send(
        conversation, widget_response={"ref": "confirm-1", "value": True}
    )
    await held(runtime, answer_id)
    pending = (await call(hass, "get_pending_widget"))["widget_answer"]
    assert pending["message_id"] == answer_id
    assert pending["kind"] == "widget.response"
    assert (pending["widget"]["ref"], pending["widget"]["value"]) == ("confirm-1", True)
    await call(hass, "mark_processed", messageId=answer_id, note="door opened")
    assert await call(hass, "get_pending_widget") == {"widget_answer": None}


async def test_checkpoints_saved_and_listed(hass: HomeAssistant, emulator: EmulatorHandle) -> None:
    agent, first = await owner_asks(hass, emulator, "Plan my week")
    conversation = agent.conversation_id
    second = await human_says(emulator, agent.runtime, conversation, "And water the plants")

    saved = await call(
        hass,
        "save_checkpoint",
        sourceMessageId=first,
        summary="Read the calendar",
        nextAction="Propose a plan",
        hostSessionLabel="session A",
    )
    assert saved["checkpoint"]["status"] == "active"
    assert saved["checkpoint"]["conversation_id"] == conversation
    await call(
        hass,
        "save_checkpoint",
        sourceMessageId=second,
        summary="Watered",
        nextAction="Nothing",
        status="completed",
    )
    active = (await call(hass, "get_checkpoints"))["checkpoints"]
    assert [(c["source_message_id"], c["host_session_label"]) for c in active] == [
        (first, "session A")
    ]
    every = await call(hass, "get_checkpoints", includeCompleted=True)
    assert {c["source_message_id"] for c in every["checkpoints"]} == {first, second}
    with pytest.raises(HomeAssistantError, match="outside what the Pacerelle LLM API"):
        await call(hass, "get_checkpoints", conversationId="conv_x", includeCompleted=True)
    # Saving again replaces: the work is done now.
    await call(
        hass,
        "save_checkpoint",
        sourceMessageId=first,
        summary="Plan sent",
        nextAction="None",
        status="completed",
    )
    assert (await call(hass, "get_checkpoints"))["checkpoints"] == []


async def test_several_agents_are_addressed_by_id_or_name(
    hass: HomeAssistant, emulator: EmulatorHandle
) -> None:
    home = (await start_agent(hass, emulator)).installed
    cottage = (await start_agent(hass, emulator, name="Cottage")).installed
    with pytest.raises(HomeAssistantError, match="Several Pacerelle agents") as refused:
        await call(hass, "get_status")
    assert home.agent_id in str(refused.value)
    assert cottage.agent_id in str(refused.value)
    assert (await call(hass, "get_status", agent="cottage"))["agent"]["id"] == cottage.agent_id
    assert (await call(hass, "get_status", agent=home.agent_id))["agent"]["name"] == "Home"
    instance = await llm.async_get_api(hass, "pacerelle", LLM_CONTEXT)
    assert "Pass the agent argument" in instance.api_prompt
    assert cottage.agent_id in instance.api_prompt
