"""Print the PyPI requirements of Home Assistant integrations and everything they depend on.

Home Assistant installs an integration's requirements when it first loads it; the test
harness and `hass --skip-pip` do not. scripts/setup installs them up front, for the
integrations named on the command line and their `dependencies`, read from the manifests of
the Home Assistant in this environment (so they always match its version).
"""

import json
import sys
from pathlib import Path

import homeassistant.components


def requirements(roots: list[str]) -> set[str]:
    components = Path(homeassistant.components.__path__[0])
    seen: set[str] = set()
    found: set[str] = set()
    todo = list(roots)
    while todo:
        domain = todo.pop()
        if domain in seen:
            continue
        seen.add(domain)
        manifest_path = components / domain / "manifest.json"
        if not manifest_path.is_file():
            continue
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        found.update(manifest.get("requirements", []))
        todo.extend(manifest.get("dependencies", []))
    return found


if __name__ == "__main__":
    print("\n".join(sorted(requirements(sys.argv[1:]))))
