"""The Pacerelle LLM API: the tools of Pacerelle's MCP server for Home Assistant's LLM agents."""
