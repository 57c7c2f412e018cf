"""The agent on top of the library: its facade (agent.py), how it is opened (identity.py,
restore.py), its connection loop and prekeys, and what a host may read (views.py). Nothing
below imports from here (tests/client/test_layers.py)."""
