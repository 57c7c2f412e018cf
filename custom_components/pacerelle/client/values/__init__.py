"""The agent's data as values: what it holds, and nothing of how it acts on it.

Requests and hand-over marks, history, groups and their epochs, widgets and their
answers, checkpoints, the send queue, the trust book and the data that gathers them
(agent_data.py). A module here imports only the library's base (errors, limits, device
ids), the Signal engine and the relay's wire (frames, answers), and its neighbours here:
nothing that decides or runs (tests/client/test_layers.py keeps it so).
"""
