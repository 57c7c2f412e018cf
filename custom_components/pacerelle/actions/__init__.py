"""The integration's actions (services.py registers them): sending, asking, managing, trust."""
