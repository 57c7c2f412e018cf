"""The client library is layered: values at the bottom, the agent on top, no loop anywhere.

Each first-level folder of `client/` and each module directly in it is one part, and each
part has a layer. An import (type-only ones included: a loop of types is a loop to read)
goes to a part of the same layer or below, never above; no parts reach each other around
a loop, and neither do modules. The rules of the third layer are ordered among themselves
by their imports alone (what this test finds), so a loop between two of them fails too.
"""

import ast
from collections.abc import Iterator
from pathlib import Path

CLIENT = Path(__file__).parents[2] / "custom_components" / "pacerelle" / "client"
PACKAGE = "custom_components.pacerelle.client"

LAYERS: dict[str, int] = {
    # The base: what everything may use.
    "errors": 0,
    "limits": 0,
    "device_ids": 0,
    # The Signal engine and the relay's wire (frames, answers, HTTP, the gateway socket).
    "signal": 1,
    "relay": 1,
    # The agent's data as values.
    "values": 2,
    # The rules: what the agent decides and does with its data.
    "trust": 3,
    "conversations": 3,
    "stored_sizes": 3,
    "store_bounds": 3,
    "crypto_jobs": 3,
    "agent_core": 3,
    "inbox": 3,
    "outbox": 3,
    "attachments": 3,
    "state": 3,
    # The agent: opened, connected, read.
    "agent": 4,
    # The face (client/__init__.py).
    "": 5,
}


def modules() -> Iterator[tuple[str, Path]]:
    """(dotted name below the client, file) of every module; a package by its folder."""
    for path in sorted(CLIENT.rglob("*.py")):
        parts = list(path.relative_to(CLIENT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def imports(name: str, path: Path, known: set[str] | None = None) -> set[str]:
    """The client modules `name` imports, as dotted names below the client (`known`: every
    module, to tell `from .package import submodule` from an import of the package)."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if name else []
    package = here if is_package else here[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.startswith(PACKAGE + "."):
                target = node.module.removeprefix(PACKAGE + ".").split(".")
            else:
                continue
            # `from .values import groups` imports the submodule, not the package's own code.
            submodules = {".".join([*target, alias.name]) for alias in node.names}
            if known is not None and submodules <= known:
                found.update(submodules)
            else:
                found.add(".".join(target))
        elif isinstance(node, ast.Import):
            found.update(
                alias.name.removeprefix(PACKAGE + ".")
                for alias in node.names
                if alias.name.startswith(PACKAGE + ".")
            )
    return found


def part(name: str) -> str:
    return name.split(".")[0]


def graph() -> dict[str, set[str]]:
    """Module -> the client modules it imports (only names that are modules)."""
    known = dict(modules())
    names = set(known)
    return {
        name: {t for t in imports(name, path, names) if t in known and t != name}
        for name, path in known.items()
    }


def loops(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_part_has_a_layer() -> None:
    assert {part(name) for name, _ in modules()} == set(LAYERS)


def test_no_import_goes_up_a_layer() -> None:
    upward = sorted(
        f"{name} -> {target}"
        for name, targets in graph().items()
        for target in targets
        if LAYERS[part(target)] > LAYERS[part(name)]
    )
    assert upward == []


def test_no_loop_between_parts_or_modules() -> None:
    edges = graph()
    parts: dict[str, set[str]] = {}
    for name, targets in edges.items():
        parts.setdefault(part(name), set()).update(
            part(target) for target in targets if part(target) != part(name)
        )
    assert loops(parts) == []
    assert loops(edges) == []


def test_the_finder_sees_a_loop_and_an_upward_import() -> None:
    """What the tests above would report, on a made-up graph (a check that checks)."""
    assert loops({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert loops({"a": {"b"}, "b": set()}) == []
    assert imports("values.agent_data", CLIENT / "values" / "agent_data.py") >= {
        "values.trust_book",
        "errors",
    }
