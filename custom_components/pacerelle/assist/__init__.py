"""The Assist bridge: a person's messages answered by a Home Assistant conversation agent."""
