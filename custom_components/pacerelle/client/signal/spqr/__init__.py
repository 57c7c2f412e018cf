"""Sparse Post-Quantum Ratchet v1, as spqr v1.5.1 computes it (byte-identical messages).

SPQR runs beside the Double Ratchet: each message carries one small piece of an ML-KEM-768
exchange, every finished exchange starts a new epoch of symmetric chains, and every message
gets a key from them that libsignal mixes into its message keys.
"""

from .params import ChainParams, Direction, Version
from .ratchet import initial_state, recv, send
from .state import SpqrState

__all__ = [
    "ChainParams",
    "Direction",
    "SpqrState",
    "Version",
    "initial_state",
    "recv",
    "send",
]
