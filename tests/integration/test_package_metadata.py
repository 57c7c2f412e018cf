"""manifest.json and the translations carry what hassfest and HACS require (hacs.json and
the rest of HACS's checks: tests/integration/test_hacs.py)."""

import json
import re
from pathlib import Path

import pytest
from awesomeversion import AwesomeVersion

REPO = Path(__file__).parents[2]
COMPONENT = REPO / "custom_components" / "pacerelle"


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


MANIFEST = load(COMPONENT / "manifest.json")

# What hassfest requires of a custom integration, and what HACS's integration check reads.
HASSFEST_REQUIRED = {"domain", "name", "codeowners", "documentation", "iot_class", "version"}
HACS_REQUIRED = {"domain", "name", "documentation", "issue_tracker", "codeowners", "version"}
PRODUCT_REQUIRED = {"config_flow", "integration_type", "requirements", "dependencies"}


def test_manifest_has_every_required_key() -> None:
    missing = (HASSFEST_REQUIRED | HACS_REQUIRED | PRODUCT_REQUIRED) - MANIFEST.keys()
    assert not missing


def test_manifest_values() -> None:
    assert MANIFEST["domain"] == COMPONENT.name == "pacerelle"
    assert MANIFEST["name"] == "Pacerelle"
    assert MANIFEST["config_flow"] is True
    assert MANIFEST["iot_class"] == "cloud_push"
    assert MANIFEST["integration_type"] in {"hub", "service", "device"}
    for key in ("documentation", "issue_tracker"):
        assert MANIFEST[key].startswith("https://")
    assert all(owner.startswith("@") for owner in MANIFEST["codeowners"])
    assert AwesomeVersion(MANIFEST["version"]).valid


def test_manifest_key_order_is_hassfests() -> None:
    """hassfest wants domain, name, then the other keys sorted."""
    keys = list(MANIFEST)
    assert keys[:2] == ["domain", "name"]
    assert keys[2:] == sorted(keys[2:])


def test_no_requirement_that_home_assistant_already_ships() -> None:
    # Home Assistant 2026.10 validates with probatio, voluptuous's API-compatible successor.
    shipped = {"aiohttp", "cryptography", "voluptuous", "probatio"}
    names = {re.split(r"[<>=!~\[]", req)[0].lower() for req in MANIFEST["requirements"]}
    assert not names & shipped


def _leaves(tree: dict, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for key, value in tree.items():
        path = f"{prefix}{key}"
        keys |= _leaves(value, f"{path}.") if isinstance(value, dict) else {path}
    return keys


def test_english_translation_matches_strings() -> None:
    strings = load(COMPONENT / "strings.json")
    english = load(COMPONENT / "translations" / "en.json")
    assert _leaves(strings) == _leaves(english)
    assert strings == english


@pytest.mark.parametrize("path", sorted((COMPONENT / "translations").glob("*.json")))
def test_every_translation_is_a_subset_of_strings(path: Path) -> None:
    assert _leaves(load(path)) <= _leaves(load(COMPONENT / "strings.json"))
