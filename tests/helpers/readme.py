"""The README's YAML examples, found by their heading."""

import re
from pathlib import Path
from typing import Any

import yaml

README = Path(__file__).parents[2] / "README.md"


def example(title: str) -> Any:
    """The YAML block under the README heading `### {title}`."""
    text = README.read_text()
    section = text.split(f"### {title}\n", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block is not None, title
    return yaml.safe_load(block.group(1))
