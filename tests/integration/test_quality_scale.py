"""quality_scale.yaml lists every rule of Home Assistant's quality scale, each with a state."""

from pathlib import Path

import yaml

import custom_components.pacerelle

QUALITY_SCALE = Path(custom_components.pacerelle.__file__).parent / "quality_scale.yaml"
# The rules of script/hassfest/quality_scale.py (Home Assistant's source), Bronze to Platinum.
RULES = {
    "bronze": [
        "action-setup", "appropriate-polling", "brands", "common-modules", "config-flow",
        "config-flow-test-coverage", "dependency-transparency", "docs-actions",
        "docs-conditions", "docs-high-level-description", "docs-installation-instructions",
        "docs-removal-instructions", "docs-triggers", "entity-event-setup", "entity-unique-id",
        "has-entity-name", "runtime-data", "test-before-configure", "test-before-setup",
        "unique-config-entry",
    ],
    "silver": [
        "action-exceptions", "config-entry-unloading", "docs-configuration-parameters",
        "docs-installation-parameters", "entity-unavailable", "integration-owner",
        "log-when-unavailable", "parallel-updates", "reauthentication-flow", "test-coverage",
    ],
    "gold": [
        "devices", "diagnostics", "discovery", "discovery-update-info", "docs-data-update",
        "docs-examples", "docs-known-limitations", "docs-supported-devices",
        "docs-supported-functions", "docs-troubleshooting", "docs-use-cases", "dynamic-devices",
        "entity-category", "entity-device-class", "entity-disabled-by-default",
        "entity-translations", "exception-translations", "icon-translations",
        "reconfiguration-flow", "repair-issues", "stale-devices",
    ],
    "platinum": ["async-dependency", "inject-websession", "strict-typing"],
}  # fmt: skip


def test_every_rule_has_a_state_and_every_exception_a_reason() -> None:
    rules = yaml.safe_load(QUALITY_SCALE.read_text())["rules"]
    assert set(rules) == {rule for tier in RULES.values() for rule in tier}
    for name, value in rules.items():
        status = value if isinstance(value, str) else value["status"]
        assert status in {"done", "todo", "exempt"}, name
        if status != "done":
            assert isinstance(value, dict), f"{name}: say why"
            assert value.get("comment"), f"{name}: say why"


def test_platforms_declare_parallel_updates() -> None:
    from custom_components.pacerelle import PLATFORMS, event, notify, sensor

    assert {platform.value for platform in PLATFORMS} == {"event", "notify", "sensor"}
    for module in (event, notify, sensor):
        assert isinstance(module.PARALLEL_UPDATES, int)
