"""widget.standard v1 messages: a good spec of every kind, and the message around a spec."""

from typing import Any

# One spec of each kind that the client accepts unchanged.
GOOD_SPECS: dict[str, dict[str, Any]] = {
    "confirm": {"title": "Unlock?", "body": "Front door", "danger": True, "labels": {"yes": "Do"}},
    "choice": {"title": "Mode", "options": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}]},
    "permission": {"title": "Camera", "scopes": ["camera.read"]},
    "form": {
        "title": "Guest",
        "fields": [{"name": "name", "label": "Name", "type": "text", "required": True}],
        "submitLabel": "Save",
    },
    "progress": {"title": "Backup", "value": 40, "max": 80, "cancellable": True},
    "file-picker": {
        "title": "Photo",
        "multiple": True,
        "accept": ["image/*", ".pdf"],
        "maxFiles": 3,
    },
    "datetime": {"title": "When", "mode": "date", "min": "2026-01-01", "max": "2026-12-31"},
}


def widget(kind: str, spec: Any, widget_id: str = "w1", **extra: Any) -> dict[str, Any]:
    """A widget.standard v1 message of `kind` with `spec` (and `extra` fields)."""
    return {"type": "widget.standard", "v": 1, "id": widget_id, "kind": kind, "spec": spec, **extra}
