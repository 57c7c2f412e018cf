"""What a conversation holds: groups and their keys, history, widgets, checkpoints, payloads."""
