"""Repair issues the agent raises: undecryptable messages, an unreadable or restored store."""
