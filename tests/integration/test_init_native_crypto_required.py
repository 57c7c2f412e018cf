"""Without the native constant-time crypto, an agent stays offline with a repair issue.

The engine has no slow, variable-time fallback for its long-term keys (XEdDSA signing in
libsodium, Kyber prekeys in ML-KEM-1024): a Home Assistant missing PyNaCl, or with a
`cryptography` whose OpenSSL lacks ML-KEM, must say so rather than publish anything.
"""

from collections.abc import Iterator

import pytest
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.mlkem import MLKEM1024PrivateKey
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from custom_components.pacerelle import NATIVE_CRYPTO_MISSING
from custom_components.pacerelle.client.agent_core import ConnectionState
from custom_components.pacerelle.client.signal import curve
from custom_components.pacerelle.client.signal.native import native_crypto_unavailable
from custom_components.pacerelle.const import DOMAIN
from tests.helpers.agent import add_entry
from tests.helpers.emulator import EmulatorHandle
from tests.helpers.runtime import wait_until


@pytest.fixture(autouse=True)
def fresh_answer() -> Iterator[None]:
    """The answer is cached for the process: each test sees its own environment."""
    native_crypto_unavailable.cache_clear()
    yield
    native_crypto_unavailable.cache_clear()


def _no_mlkem(*_: object) -> MLKEM1024PrivateKey:
    raise UnsupportedAlgorithm("ML-KEM-1024 is not supported by this backend.")


@pytest.mark.parametrize("missing", ["pynacl", "mlkem"])
async def test_missing_native_crypto_keeps_the_agent_offline_with_a_repair(
    hass: HomeAssistant,
    emulator: EmulatorHandle,
    monkeypatch: pytest.MonkeyPatch,
    missing: str,
) -> None:
    installed = await emulator.install()
    entry = await add_entry(hass, emulator, installed)
    with monkeypatch.context() as patch:
        if missing == "pynacl":
            patch.setattr(curve, "_SODIUM", None)
        else:
            patch.setattr(MLKEM1024PrivateKey, "generate", classmethod(_no_mlkem))
        assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_ERROR
    issue = ir.async_get(hass).async_get_issue(DOMAIN, NATIVE_CRYPTO_MISSING)
    assert issue is not None
    assert issue.severity is ir.IssueSeverity.ERROR
    assert issue.translation_key == NATIVE_CRYPTO_MISSING
    expected = "PyNaCl" if missing == "pynacl" else "ML-KEM-1024"
    assert expected in (issue.translation_placeholders or {})["missing"]
    status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
    assert status["bundle_published"] is False  # nothing signed, nothing published

    # Once the environment is whole again, a reload brings the agent online and clears it.
    native_crypto_unavailable.cache_clear()
    assert await hass.config_entries.async_reload(entry.entry_id)
    runtime = entry.runtime_data
    await wait_until(lambda: runtime.status.state is ConnectionState.CONNECTED)
    assert ir.async_get(hass).async_get_issue(DOMAIN, NATIVE_CRYPTO_MISSING) is None
    status = await emulator.admin("GET", f"/agents/{installed.agent_id}")
    assert status["bundle_published"] is True
    assert await hass.config_entries.async_unload(entry.entry_id)
