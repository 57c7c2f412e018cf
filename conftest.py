"""Root conftest: make this checkout's custom_components win over the harness's own.

pytest-homeassistant-custom-component puts its testing_config/custom_components on
sys.path; importing ours first, before Home Assistant starts, keeps `pacerelle` found.
"""

import custom_components.pacerelle  # noqa: F401

# The Pacerelle emulator as a real server on loopback, and Assist with a light to switch,
# for every test that asks for them.
pytest_plugins = ["tests.helpers.emulator", "tests.helpers.assist"]
