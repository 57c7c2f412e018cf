"""The demo's camera (scripts/develop): a bundled picture, so snapshots work offline."""
