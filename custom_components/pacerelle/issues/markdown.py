"""Relay-made text shown inside a markdown description (repairs, fix flows).

Titles are plain text; descriptions are rendered as markdown. Ids, members and names that
come from the relay go into a description escaped, so none of theirs becomes a link, an
image or HTML in Home Assistant's dialogs.
"""


def markdown_text(value: str) -> str:
    """`value` shown as itself in a markdown description: every ASCII punctuation mark
    escaped."""
    return "".join(
        f"\\{c}" if c.isascii() and not c.isalnum() and not c.isspace() else c for c in value
    )
