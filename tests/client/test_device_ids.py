"""Device-id validity is one rule (client/device_ids.py): no other module of the package
spells its own check (str.isdigit takes every Unicode digit, int() a sign and spaces)."""

import ast
from pathlib import Path

from custom_components.pacerelle.client.device_ids import is_device_id

PACKAGE = Path(__file__).parents[2] / "custom_components" / "pacerelle"
DIGIT_CHECKS = {"isdigit", "isdecimal", "isnumeric"}
# Prekey slot ids of the agent's own store, not device ids.
ALLOWED = {("client/signal/state.py", "isdigit")}


def test_one_spelling_per_device() -> None:
    assert [v for v in ("1", "7", "999999999") if not is_device_id(v)] == []
    refused = ("", "0", "007", "+7", " 7", "7\n", "\u0667", "1_0", "1000000000", "٣")
    assert [v for v in refused if is_device_id(v)] == []


def test_no_module_checks_digits_by_itself() -> None:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in DIGIT_CHECKS:
                found.add((str(path.relative_to(PACKAGE)), node.attr))
    assert found - ALLOWED == set()
