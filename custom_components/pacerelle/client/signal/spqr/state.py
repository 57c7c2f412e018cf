"""SPQR's whole state for one session (lib.rs `PqRatchetState`), immutable, with its JSON form.

`braid` is None when SPQR is disabled (version V0). `negotiation` is kept until the first
message arrives: until then either side may still fall back to a lower version. `chain` is
created by the first send or receive that needs a key.
"""

from dataclasses import dataclass
from typing import Any

from ..errors import SignalError, SignalErrorKind
from . import state_json
from .braid import BraidState
from .chain import Chain
from .params import ChainParams, Direction, Version

JSON_FORMAT = 1
"""Version of our JSON layout (not of the protocol); bump it on any incompatible change."""


@dataclass(frozen=True, slots=True)
class VersionNegotiation:
    """What the session started with, kept while the peer's version is still unknown."""

    auth_key: bytes
    direction: Direction
    min_version: Version
    chain_params: ChainParams


@dataclass(frozen=True, slots=True)
class SpqrState:
    """Everything SPQR keeps between messages of one session."""

    negotiation: VersionNegotiation | None = None
    chain: Chain | None = None
    braid: BraidState | None = None

    @property
    def version(self) -> Version:
        """The protocol version this state speaks now."""
        return Version.V0 if self.braid is None else Version.V1

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (bytes as base64)."""
        out: dict[str, Any] = {"format": JSON_FORMAT}
        if self.negotiation is not None:
            n = self.negotiation
            out["negotiation"] = {
                "auth_key": state_json.b64(n.auth_key),
                "direction": int(n.direction),
                "min_version": int(n.min_version),
                "params": state_json.params_to_json(n.chain_params),
            }
        if self.chain is not None:
            out["chain"] = state_json.chain_to_json(self.chain)
        if self.braid is not None:
            out["braid"] = state_json.braid_to_json(self.braid)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpqrState:
        """Read what `to_json` wrote; refuses anything else with INVALID_STATE."""
        if not isinstance(data, dict) or data.get("format") != JSON_FORMAT:
            raise SignalError(SignalErrorKind.INVALID_STATE, "SPQR state: unknown JSON format")
        try:
            negotiation = None
            if (n := data.get("negotiation")) is not None:
                negotiation = VersionNegotiation(
                    auth_key=state_json.unb64(n["auth_key"]),
                    direction=Direction(n["direction"]),
                    min_version=Version(n["min_version"]),
                    chain_params=state_json.params_from_json(n["params"]),
                )
            chain = data.get("chain")
            braid = data.get("braid")
            return cls(
                negotiation=negotiation,
                chain=None if chain is None else state_json.chain_from_json(chain),
                braid=None if braid is None else state_json.braid_from_json(braid),
            )
        except (KeyError, TypeError, ValueError, AttributeError, SignalError) as err:
            raise SignalError(SignalErrorKind.INVALID_STATE, f"SPQR state: {err!r}") from err
