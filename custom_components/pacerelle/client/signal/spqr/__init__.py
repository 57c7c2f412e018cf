"""Sparse Post-Quantum Ratchet (SPQR v1): the post-quantum half of the triple ratchet."""
