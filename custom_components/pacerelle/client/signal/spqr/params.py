"""What both parties agree on when SPQR starts (lib.rs `Params`, pq_ratchet.proto enums)."""

from dataclasses import dataclass
from enum import IntEnum

from .. import consts
from ..errors import SignalError, SignalErrorKind

UINT32_MAX = (1 << 32) - 1
UINT64_MAX = (1 << 64) - 1


class Direction(IntEnum):
    """Which way a party's sending chain runs; values as in pq_ratchet.proto."""

    A2B = 0
    B2A = 1

    def switch(self) -> Direction:
        """The other party's direction."""
        return Direction.B2A if self is Direction.A2B else Direction.A2B


class Version(IntEnum):
    """SPQR protocol versions; V0 means SPQR is disabled. The first byte of a V1 message is 1."""

    V0 = 0
    V1 = 1


@dataclass(frozen=True, slots=True)
class ChainParams:
    """Limits of the symmetric chains, libsignal's values by default (ratchet.rs).

    As in spqr, zero stands for the default; a self-session uses max_jump = 2**32 - 1.
    """

    max_jump: int = consts.MAX_FORWARD_JUMPS
    """Refuse a key more than this far ahead of the last one derived."""
    max_ooo_keys: int = consts.MAX_MESSAGE_KEYS
    """Keep skipped keys back to this far behind the last one derived."""

    def __post_init__(self) -> None:
        for name in ("max_jump", "max_ooo_keys"):
            value = getattr(self, name)
            if not 0 <= value <= UINT32_MAX:
                raise SignalError(SignalErrorKind.PQ_RATCHET, f"Invalid params: {name} {value}")
        if self.max_jump == 0:
            object.__setattr__(self, "max_jump", consts.MAX_FORWARD_JUMPS)
        if self.max_ooo_keys == 0:
            object.__setattr__(self, "max_ooo_keys", consts.MAX_MESSAGE_KEYS)

    @property
    def trim_size(self) -> int:
        """Skipped keys held before old ones are dropped (10 % slack to batch the work)."""
        return self.max_ooo_keys * 11 // 10 + 1
