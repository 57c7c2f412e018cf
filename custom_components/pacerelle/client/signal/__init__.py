"""Signal protocol engine (PQXDH, Double Ratchet, SPQR): HA-free and I/O-free."""
