"""The Pacerelle LLM API: seed 001's MCP tools for Home Assistant's LLM agents."""
