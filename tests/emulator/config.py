"""Settings of one emulator instance, from the command line or a test fixture."""

from dataclasses import dataclass
from pathlib import Path

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
RUNTIME_TOKEN_TTL_SECONDS = 15 * 60
AUTH_REQUEST_TTL_SECONDS = 10 * 60
MAX_BLOB_BYTES = 25 * 1024 * 1024
MAX_GATEWAY_FRAME_BYTES = 1024 * 1024
DEFAULT_USER_ID = "usr_demo"
DEFAULT_DEVICE_ID = "1"


@dataclass(frozen=True)
class EmulatorConfig:
    """What can differ between two emulators; everything else is Pacerelle's rule."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    state_file: Path | None = None
    runtime_token_ttl: float = RUNTIME_TOKEN_TTL_SECONDS
    auth_request_ttl: float = AUTH_REQUEST_TTL_SECONDS
    max_blob_bytes: int = MAX_BLOB_BYTES
    max_frame_bytes: int = MAX_GATEWAY_FRAME_BYTES
    # Where browsers reach the emulator, if not at the address the API caller used.
    public_url: str | None = None
