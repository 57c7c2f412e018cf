"""The agent's store inside Home Assistant: its files, generation and hand-over marks."""
