"""The Pacerelle server: HTTP and REST API, the gateway WebSocket, tokens, Agent Connect."""
