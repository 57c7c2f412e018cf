"""A module's tests are found by its path: at least 80 % of the package's modules have them.

`custom_components/pacerelle/client/x/y.py` is tested in `tests/client/x/test_y.py` (and
`test_y_<topic>.py`), an HA-side `foo/bar.py` in `tests/integration/foo/test_bar.py`, a
top-level `bar.py` in `tests/integration/test_bar.py`; an `__init__.py` that holds code in
`test_init.py`. A test file counts for the module with the longest name it starts with, so
`test_agent_core.py` is `agent_core`'s, not `agent`'s. Scenario tests live elsewhere.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "custom_components" / "pacerelle"
TESTS = ROOT / "tests"
SHARE = 0.8


def holds_code(path: Path) -> bool:
    """Whether a module is more than a docstring, imports and its `__all__`."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
                continue
        return True
    return False


def modules() -> list[Path]:
    """The package's modules, relative to it: `__init__.py` files only when they hold code."""
    return sorted(
        path.relative_to(PACKAGE)
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" or holds_code(path)
    )


def mirror_folder(module: Path) -> Path:
    """The test folder where a module's tests live."""
    if module.parts[0] == "client":
        return TESTS.joinpath(*module.parts[:-1])
    return TESTS.joinpath("integration", *module.parts[:-1])


def stem(module: Path) -> str:
    """The name a module's test files start with, after `test_`."""
    return "init" if module.name == "__init__.py" else module.stem


def mirror_tests(module: Path, names: set[str]) -> list[Path]:
    """A module's test files: `test_<stem>.py` and `test_<stem>_<topic>.py` in its folder,
    less those that belong to a sibling whose name is longer and starts the same."""
    folder = mirror_folder(module)
    if not folder.is_dir():
        return []
    own = stem(module)
    longer = [name for name in names if name != own and name.startswith(f"{own}_")]
    found = []
    for test in sorted(folder.glob("test_*.py")):
        topic = test.stem.removeprefix("test_")
        if topic != own and not topic.startswith(f"{own}_"):
            continue
        if any(topic == name or topic.startswith(f"{name}_") for name in longer):
            continue
        found.append(test)
    return found


def without_tests() -> list[str]:
    """The modules that have no test file at their mirror path, sorted."""
    all_modules = modules()
    siblings: dict[Path, set[str]] = {}
    for module in all_modules:
        siblings.setdefault(module.parent, set()).add(stem(module))
    return sorted(
        str(module) for module in all_modules if not mirror_tests(module, siblings[module.parent])
    )


def test_most_modules_have_tests_at_their_mirror_path() -> None:
    """At least 80 % of the modules have a test file where their path says."""
    total = len(modules())
    missing = without_tests()
    share = (total - len(missing)) / total
    assert share >= SHARE, (
        f"{share:.0%} of {total} modules have tests at their mirror path "
        f"(at least {SHARE:.0%} should); without: {', '.join(missing)}"
    )


def test_the_rule_finds_a_module_and_its_topics() -> None:
    """The rule itself: a module's own file and its topic files count, a longer sibling's
    do not, and a module whose folder has no tests has none."""
    names = {"agent", "agent_core"}
    agent = mirror_tests(Path("client/agent/agent.py"), {"agent", "views"})
    assert TESTS / "client/agent/test_agent.py" in agent
    core = mirror_tests(Path("client/agent_core.py"), names)
    assert all(test.stem.startswith("test_agent_core") for test in core)
    assert not any(
        test.stem.startswith("test_agent_core")
        for test in mirror_tests(Path("client/agent.py"), names)
    )
    assert mirror_folder(Path("sensor.py")) == TESTS / "integration"
    assert mirror_folder(Path("llm/tools.py")) == TESTS / "integration/llm"
    assert mirror_folder(Path("client/signal/kem/ntt.py")) == TESTS / "client/signal/kem"
