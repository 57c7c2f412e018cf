"""Incoming messages: the queue from the gateway, opening, checks, and the hand-over."""
