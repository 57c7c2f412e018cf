"""HA-free client library for Pacerelle: protocol, gateway and end-to-end encryption."""
