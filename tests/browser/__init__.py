"""Browser tests: headless Chromium against a real Home Assistant frontend."""
