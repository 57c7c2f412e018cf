"""System tests: the emulator and a real Home Assistant as separate processes."""
