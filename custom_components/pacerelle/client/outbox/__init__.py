"""Outgoing messages: encryption and writing, the queue of offline sends, confirmations."""
