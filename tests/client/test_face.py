"""The Home Assistant side reaches the client library only through its face
(`client/__init__.py`), never an inner module: what the client decides stays behind it."""

import ast
import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from custom_components.pacerelle import client
from custom_components.pacerelle.client.errors import PacerelleAuthError
from custom_components.pacerelle.client.relay.tokens import InstallationRevokedError
from custom_components.pacerelle.client.state.errors import DocumentTooLargeError

PACKAGE = Path(client.__file__).parent.parent
CLIENT = PACKAGE / "client"


def _inner_imports(source: str, depth: int = 0) -> list[str]:
    """The inner client modules a module imports (relative or absolute), as written;
    `depth`: how many folders below the package the module lies."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == depth + 1 and module.startswith("client."):
                found.append(f"{'.' * node.level}{module}")
            elif node.level == 0 and module.startswith("custom_components.pacerelle.client."):
                found.append(module)
            elif node.level == depth + 1 and module == "client":
                # `from .client import signal` would be the same door left open.
                found += [f"client.{a.name}" for a in node.names if a.name not in client.__all__]
        elif isinstance(node, ast.Import):
            found += [
                alias.name
                for alias in node.names
                if alias.name.startswith("custom_components.pacerelle.client.")
            ]
    return found


def _depth(path: Path) -> int:
    return len(path.relative_to(PACKAGE).parts) - 1


def _offenders(check: Callable[[str, Path], list[Any]]) -> dict[str, list[Any]]:
    """What `check(source, path)` finds in each module outside the client, by module."""
    outside = [p for p in sorted(PACKAGE.rglob("*.py")) if CLIENT not in p.parents]
    assert len(outside) > 30  # the walk sees the Home Assistant side
    return {
        str(path.relative_to(PACKAGE)): found
        for path in outside
        if (found := check(path.read_text(encoding="utf-8"), path))
    }


def test_no_module_outside_the_client_imports_past_its_face() -> None:
    assert _offenders(lambda source, path: _inner_imports(source, _depth(path))) == {}


def test_the_check_sees_an_inner_import() -> None:
    """The walk itself: an inner import of each form is found (the test could fail)."""
    source = (
        "from .client.sender import Sender\n"
        "from custom_components.pacerelle.client.values.trust_book import TrustBook\n"
        "import custom_components.pacerelle.client.values.requests\n"
        "from .client import Agent\n"
        "from ..client.inbox import Request\n"
    )
    assert _inner_imports(source) == [
        ".client.sender",
        "custom_components.pacerelle.client.values.trust_book",
        "custom_components.pacerelle.client.values.requests",
    ]
    assert _inner_imports(source, depth=1) == [
        "custom_components.pacerelle.client.values.trust_book",
        "custom_components.pacerelle.client.values.requests",
        "..client.inbox",
    ]


def _is_agent(node: ast.expr | None, names: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names
    return isinstance(node, ast.Attribute) and node.attr == "agent"


def _agent_state_reads(source: str) -> list[int]:
    """The lines that read an agent's state (`agent.data`, `runtime.agent.data`, or through
    a name bound to an agent or annotated `Agent`)."""
    tree = ast.parse(source)
    names = {"agent"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_agent(node.value, names):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign | ast.arg):
            annotation = node.annotation
            target = node.target if isinstance(node, ast.AnnAssign) else None
            name = node.arg if isinstance(node, ast.arg) else getattr(target, "id", None)
            if name and isinstance(annotation, ast.Name) and annotation.id == "Agent":
                names.add(name)
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "data" and _is_agent(node.value, names)
    )


def test_no_module_outside_the_client_reads_the_agents_state() -> None:
    """The HA side asks the agent's read views (client/agent/views.py: requests for the host,
    counts and ids for diagnostics), never its `AgentData`: what the client keeps and how
    it lays it out stays behind the face."""
    assert _offenders(lambda source, _path: _agent_state_reads(source)) == {}


def test_the_check_sees_a_read_of_the_agents_state() -> None:
    source = (
        "pending = agent.data.inbox.pending\n"
        "data = entry.runtime_data.agent.data\n"
        "a = runtime.agent\n"
        "members = a.data.conversations\n"
        "def f(bot: Agent) -> None:\n"
        "    bot.data\n"
        "fields = call.data\n"
        "entry.data[CONF_AGENT_ID]\n"
        "agent.pending_requests()\n"
    )
    assert _agent_state_reads(source) == [1, 2, 4, 6]


def test_the_face_exports_what_it_lists() -> None:
    missing = [name for name in client.__all__ if not hasattr(client, name)]
    assert missing == []
    assert len(set(client.__all__)) == len(client.__all__)


def _client_exceptions() -> set[type[BaseException]]:
    """Every exception class the client library defines outside its Signal engine (whose
    SignalError the client turns into a refusal or a decrypt failure before a host sees it)."""
    found: set[type[BaseException]] = set()
    for info in pkgutil.walk_packages(client.__path__, f"{client.__name__}."):
        if info.name.startswith(f"{client.__name__}.signal"):
            continue
        module = importlib.import_module(info.name)
        found |= {
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, BaseException)
            and value.__module__ == info.name
        }
    return found


def test_every_client_error_is_in_one_tree_with_a_kind_on_the_face() -> None:
    """A host catches `PacerelleError` for anything the client refuses and answers each by
    its kind (the HA side translates each kind: errors.py), not by its class."""
    errors = _client_exceptions()
    assert len(errors) > 10
    assert [e.__name__ for e in errors if not issubclass(e, client.PacerelleError)] == []
    assert {e.kind for e in errors} == set(client.ErrorKind)
    # What callers catch by its older base still catches it.
    assert issubclass(client.WidgetError, ValueError)
    assert issubclass(InstallationRevokedError, PacerelleAuthError)
    assert issubclass(DocumentTooLargeError, client.StoreError)
    assert InstallationRevokedError.kind is client.ErrorKind.REVOKED


def test_the_face_is_narrow() -> None:
    """What Home Assistant shows and calls, nothing of how the client keeps it."""
    assert len(client.__all__) <= 47, len(client.__all__)
    assert sorted(client.__all__) == sorted(set(client.__all__))
