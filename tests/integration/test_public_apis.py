"""The integration uses other integrations through their public API only (core review).

Every module of custom_components/pacerelle is parsed. It fails on:
- an import of another integration's module below its package
  (`homeassistant.components.<x>.<y>`, or `from homeassistant.components.<x> import <y>`
  where `<y>` is a module of `<x>`), unless `<y>` is `const` or listed in
  PRIVATE_MODULES_ALLOWED with its reason;
- an underscored name imported from another integration;
- a `hass.data` key that is not the integration's own: a key imported from elsewhere, a
  string that does not start with the domain, or a key whose owner cannot be told.
The checker is tried on small sources first, so that a clean result is not a blind one.
"""

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import homeassistant.components
import pytest

from custom_components.pacerelle.const import DOMAIN

PACKAGE: Final = Path(__file__).parents[2] / "custom_components" / "pacerelle"
COMPONENTS: Final = Path(homeassistant.components.__file__).parent
COMPONENTS_PREFIX: Final = "homeassistant.components."
# Another integration's module that may be imported anyway: "<x>.<y>": why.
PRIVATE_MODULES_ALLOWED: Final[dict[str, str]] = {}
DATA_METHODS: Final = frozenset({"get", "setdefault", "pop"})


@dataclass(frozen=True, slots=True)
class Finding:
    where: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.where}:{self.line}: {self.what}"


def _is_module(integration: str, name: str) -> bool:
    """Whether `name` is a module (file or package) of the installed integration."""
    folder = COMPONENTS / integration
    return (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file()


def _module_finding(dotted: str) -> str | None:
    """Why importing `homeassistant.components.<dotted>` is not public, or None."""
    integration, _, rest = dotted.partition(".")
    if not rest or integration == DOMAIN:
        return None
    first = rest.split(".", 1)[0]
    if rest == "const" or f"{integration}.{first}" in PRIVATE_MODULES_ALLOWED:
        return None
    return f"imports {COMPONENTS_PREFIX}{integration}.{rest}, not the package"


def _plain_import_findings(node: ast.Import) -> Iterator[str]:
    for alias in node.names:
        if alias.name.startswith(COMPONENTS_PREFIX) and (
            why := _module_finding(alias.name.removeprefix(COMPONENTS_PREFIX))
        ):
            yield why


def _import_findings(node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from _plain_import_findings(node)
        return
    if node.level or node.module is None or not node.module.startswith(COMPONENTS_PREFIX):
        return  # the integration's own modules, `from homeassistant.components import tts`
    dotted = node.module.removeprefix(COMPONENTS_PREFIX)
    integration = dotted.split(".", 1)[0]
    if integration == DOMAIN:
        return
    if why := _module_finding(dotted):
        yield why
        return
    for alias in node.names:
        if alias.name.startswith("_"):
            yield f"imports {alias.name} (underscored) from {node.module}"
        elif "." not in dotted and _is_module(integration, alias.name):
            yield from filter(None, [_module_finding(f"{integration}.{alias.name}")])


def _is_hass_data(node: ast.expr) -> bool:
    """`hass.data`, `self.hass.data`, `self._hass.data`, ..."""
    if not isinstance(node, ast.Attribute) or node.attr != "data":
        return False
    owner = node.value
    name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
    return name.lstrip("_") == "hass"


def _data_keys(tree: ast.Module) -> Iterator[ast.expr]:
    """Every expression used as a key of `hass.data`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_hass_data(node.value):
            yield node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in DATA_METHODS
            and _is_hass_data(node.func.value)
            and node.args
        ):
            yield node.args[0]
        elif isinstance(node, ast.Compare) and any(
            isinstance(op, ast.In | ast.NotIn) and _is_hass_data(right)
            for op, right in zip(node.ops, node.comparators, strict=True)
        ):
            yield node.left


def _foreign_names(tree: ast.Module) -> set[str]:
    """Names the module binds by importing from outside the integration."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level:
            names |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {alias.asname or alias.name.split(".", 1)[0] for alias in node.names}
    return names


def _own_key(key: ast.expr, foreign: set[str]) -> bool:
    """Whether a `hass.data` key is the integration's: defined here or named after it."""
    if isinstance(key, ast.Name):
        return key.id not in foreign
    if isinstance(key, ast.Constant):
        return isinstance(key.value, str) and key.value.startswith(DOMAIN)
    if isinstance(key, ast.JoinedStr) and key.values:
        first = key.values[0]
        if isinstance(first, ast.Constant):
            return isinstance(first.value, str) and first.value.startswith(DOMAIN)
        return isinstance(first, ast.FormattedValue) and ast.unparse(first.value) == "DOMAIN"
    return False  # an attribute of a module, a call: whose key it is cannot be told


def findings(source: str, where: str) -> list[Finding]:
    """What in `source` uses another integration's internals."""
    tree = ast.parse(source)
    found = [
        Finding(where, node.lineno, why)
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for why in _import_findings(node)
    ]
    foreign = _foreign_names(tree)
    found += [
        Finding(where, key.lineno, f"hass.data[{ast.unparse(key)}]: not the integration's key")
        for key in _data_keys(tree)
        if not _own_key(key, foreign)
    ]
    return sorted(found, key=lambda finding: finding.line)


@pytest.mark.parametrize(
    "source",
    [
        "from homeassistant.components.tts.const import DATA_TTS_MANAGER as M\nhass.data[M]\n",
        "from homeassistant.components.assist_pipeline.pipeline import async_get_pipeline\n",
        "import homeassistant.components.recorder.core\n",
        "from homeassistant.components.assist_pipeline import select\n",
        "from homeassistant.components.tts import _hash_options\n",
        "from homeassistant.helpers.recorder import DATA_INSTANCE\nhass.data.get(DATA_INSTANCE)\n",
        "from homeassistant.components import ffmpeg\nif ffmpeg.DATA_FFMPEG in hass.data: pass\n",
        "self._hass.data['recorder_instance']\n",
        "hass.data.setdefault(f'{OTHER}_x', 1)\n",
    ],
)
def test_the_checker_finds_internals(source: str) -> None:
    assert findings(source, "example.py"), source


@pytest.mark.parametrize(
    "source",
    [
        "from homeassistant.components import tts\n",
        "from homeassistant.components.tts import generate_media_source_id\n",
        "from homeassistant.components.notify.const import NotifyEntityFeature\n",
        "from .const import DOMAIN\nfrom ..client import Request\n",
        "KEY = HassKey(f'{DOMAIN}_voice')\nhass.data.setdefault(KEY, 1)\n",
        "hass.data[f'{DOMAIN}_x'] = 1\nhass.data.get('pacerelle_store')\n",
    ],
)
def test_the_checker_lets_public_use_through(source: str) -> None:
    assert findings(source, "example.py") == []


def test_every_module_uses_other_integrations_public_api_only() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50  # the whole integration, not an empty folder
    found = [
        finding
        for path in modules
        for finding in findings(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    ]
    assert [str(finding) for finding in found] == []


def test_each_allowed_private_module_exists_and_says_why() -> None:
    for dotted, why in PRIVATE_MODULES_ALLOWED.items():
        assert why.strip(), dotted
        assert _is_module(*dotted.split(".", 1)), dotted
