"""scripts/develop's helpers under test: the modules of scripts/lib, imported from their files
(scripts/ is no package)."""

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]


def script_module(name: str) -> ModuleType:
    """scripts/lib/`name`.py as a module of its own (not put in sys.modules)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "lib" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


develop_config: Final = script_module("develop_config")
