"""The approval page behind `authorization_url`: what the user sees in Pacerelle."""

from html import escape
from string import Template

from aiohttp import web

from .agent_connect import decide, pending_request
from .context import emulator_of
from .http_util import ApiError

_PAGE = Template("""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pacerelle: $title</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/_emulator/static/chat.css"></head>
<body><main class="card"><h1>$title</h1>$body</main></body></html>
""")

_FORM = Template("""<p><strong>$agent_name</strong> wants to connect to your Pacerelle account
(<code>$user_id</code>) as an agent.</p>
<blockquote>$agent_description</blockquote>
<p>Requested by the app <strong>$client_name</strong>. You will be sent back to
<code>$redirect_host</code>.</p>
<form method="post" action="/agent-connect/authorize">
<input type="hidden" name="request_id" value="$request_id">
<button name="decision" value="approve" class="primary">Approve</button>
<button name="decision" value="deny">Deny</button>
</form>""")


def _page(title: str, body: str, status: int = 200) -> web.Response:
    html = _PAGE.substitute(title=escape(title), body=body)
    return web.Response(text=html, content_type="text/html", status=status)


async def show(request: web.Request) -> web.Response:
    emulator = emulator_of(request)
    try:
        auth = pending_request(emulator, request.query.get("request_id", ""))
    except ApiError as err:
        return _page("Cannot connect this agent", f"<p>{escape(err.message)}</p>", err.status)
    client = emulator.state.clients[auth.client_id]
    body = _FORM.substitute(
        agent_name=escape(auth.agent_name),
        agent_description=escape(auth.agent_description) or "<em>No description.</em>",
        user_id=escape(auth.user_id),
        client_name=escape(client.client_name),
        redirect_host=escape(auth.redirect_uri.split("/")[2]),
        request_id=escape(auth.request_id),
    )
    return _page("Connect an agent", body)


async def answer(request: web.Request) -> web.StreamResponse:
    form = await request.post()
    try:
        url = decide(
            emulator_of(request),
            str(form.get("request_id", "")),
            approve=form.get("decision") == "approve",
        )
    except ApiError as err:
        return _page("Cannot connect this agent", f"<p>{escape(err.message)}</p>", err.status)
    raise web.HTTPSeeOther(url)


def routes() -> list[web.AbstractRouteDef]:
    return [
        web.get("/agent-connect/authorize", show),
        web.post("/agent-connect/authorize", answer),
    ]
