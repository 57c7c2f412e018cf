"""The client library is HA-free: nothing under client/ imports homeassistant."""

import ast
from pathlib import Path

CLIENT = Path(__file__).parents[2] / "custom_components" / "pacerelle" / "client"


def imported_modules(source: str) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            modules.add("." * node.level + (node.module or ""))
    return modules


def test_client_imports_nothing_from_home_assistant() -> None:
    files = sorted(CLIENT.rglob("*.py"))
    assert files, "the client library has no modules"
    offenders = {
        str(path.relative_to(CLIENT)): sorted(
            name
            for name in imported_modules(path.read_text(encoding="utf-8"))
            if name.split(".")[0] == "homeassistant"
        )
        for path in files
    }
    assert not {path: names for path, names in offenders.items() if names}


def test_client_relative_imports_stay_inside_client() -> None:
    """A relative import climbing out of client/ would reach the HA-aware package."""
    for path in CLIENT.rglob("*.py"):
        depth = len(path.relative_to(CLIENT).parts) - 1  # packages above the module, inside client
        for name in imported_modules(path.read_text(encoding="utf-8")):
            dots = len(name) - len(name.lstrip("."))
            assert dots <= depth + 1, f"{path}: {name} leaves client/"


def test_the_check_catches_an_import() -> None:
    assert "homeassistant.core" in imported_modules("from homeassistant.core import HomeAssistant")
    assert "homeassistant" in imported_modules("import homeassistant")


def test_the_signal_engine_takes_only_the_device_id_rule_from_the_client() -> None:
    """The engine reads like libsignal and stands alone: of the rest of the client it uses
    only the one device-id rule (client/device_ids.py, itself importing only the bound it
    checks from client/limits.py, which imports nothing)."""
    engine = CLIENT / "signal"
    taken = set()
    for path in engine.rglob("*.py"):
        depth = len(path.relative_to(engine).parts) - 1
        for name in imported_modules(path.read_text(encoding="utf-8")):
            if len(name) - len(name.lstrip(".")) > depth + 1:
                taken.add(name.lstrip("."))
    assert taken == {"device_ids"}
    assert imported_modules((CLIENT / "device_ids.py").read_text(encoding="utf-8")) <= {
        "re",
        "typing",
        ".limits",
    }
    assert imported_modules((CLIENT / "limits.py").read_text(encoding="utf-8")) <= {
        "dataclasses",
        "typing",
    }
