"""The JSON form of the chains and braid states: compact (bytes as base64), checked on reading.

Skipped keys are packed as spqr packs them, 4-byte big-endian index then the 32-byte key,
so 2,000 kept keys cost about 96 kB of JSON rather than three times that.
"""

import base64
import binascii
from dataclasses import fields
from types import MappingProxyType
from typing import Any

from ..kem import mlkem768_incremental as kem
from .authenticator import KEY_SIZE as AUTH_KEY_SIZE
from .authenticator import Authenticator
from .braid import BraidState
from .chain import KEY_SIZE, Chain, ChainDirection, ChainEpoch
from .encoding import PolyDecoder, PolyEncoder
from .params import UINT32_MAX, UINT64_MAX, ChainParams, Direction
from .send_ct import (
    Ct1Acknowledged,
    Ct1Sampled,
    Ct2Sampled,
    EkReceivedCt1Sampled,
    HeaderReceived,
    NoHeaderReceived,
)
from .send_ek import Ct1Received, EkSentCt1Received, HeaderSent, KeysSampled, KeysUnsampled

SKIPPED_RECORD_SIZE = 4 + KEY_SIZE

BRAID_STATES: dict[str, type[BraidState]] = {
    "keys_unsampled": KeysUnsampled,
    "keys_sampled": KeysSampled,
    "header_sent": HeaderSent,
    "ct1_received": Ct1Received,
    "ek_sent_ct1_received": EkSentCt1Received,
    "no_header_received": NoHeaderReceived,
    "header_received": HeaderReceived,
    "ct1_sampled": Ct1Sampled,
    "ek_received_ct1_sampled": EkReceivedCt1Sampled,
    "ct1_acknowledged": Ct1Acknowledged,
    "ct2_sampled": Ct2Sampled,
}
STATE_NAMES = {cls: name for name, cls in BRAID_STATES.items()}

# Byte fields of fixed size; others (dk, es) are as the KEM module makes them.
FIXED_SIZES = {
    "hdr": kem.HEADER_SIZE,
    "ek": kem.ENCAPSULATION_KEY_SIZE,
    "ct1": kem.CIPHERTEXT1_SIZE,
}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: Any, size: int | None = None) -> bytes:
    """Strict base64; with `size`, the decoded length must match."""
    if not isinstance(text, str):
        raise TypeError(f"expected base64 text, got {type(text).__name__}")
    try:
        data = base64.b64decode(text, validate=True)
    except binascii.Error as err:
        raise ValueError(f"bad base64: {err}") from err
    if size is not None and len(data) != size:
        raise ValueError(f"expected {size} bytes, got {len(data)}")
    return data


def _int(value: Any, maximum: int) -> int:
    if type(value) is not int or not 0 <= value <= maximum:
        raise ValueError(f"expected an integer in 0..{maximum}, got {value!r}")
    return value


def params_to_json(params: ChainParams) -> list[int]:
    return [params.max_jump, params.max_ooo_keys]


def params_from_json(data: Any) -> ChainParams:
    max_jump, max_ooo_keys = data
    return ChainParams(_int(max_jump, UINT32_MAX), _int(max_ooo_keys, UINT32_MAX))


def _direction_to_json(chain: ChainDirection) -> list[Any]:
    packed = b"".join(i.to_bytes(4, "big") + key for i, key in chain.skipped.items())
    return [chain.ctr, b64(chain.next), b64(packed)]


def _direction_from_json(data: Any) -> ChainDirection:
    ctr, next_key, packed_text = data
    next_bytes = unb64(next_key)
    if len(next_bytes) not in (0, KEY_SIZE):
        raise ValueError("chain key of bad size")
    packed = unb64(packed_text)
    if len(packed) % SKIPPED_RECORD_SIZE:
        raise ValueError("skipped keys of bad size")
    skipped = {
        int.from_bytes(packed[at : at + 4], "big"): packed[at + 4 : at + SKIPPED_RECORD_SIZE]
        for at in range(0, len(packed), SKIPPED_RECORD_SIZE)
    }
    return ChainDirection(_int(ctr, UINT32_MAX), next_bytes, MappingProxyType(skipped))


def chain_to_json(chain: Chain) -> dict[str, Any]:
    return {
        "direction": int(chain.direction),
        "current_epoch": chain.current_epoch,
        "send_epoch": chain.send_epoch,
        "next_root": b64(chain.next_root),
        "params": params_to_json(chain.params),
        "links": [
            [_direction_to_json(link.send), _direction_to_json(link.recv)] for link in chain.links
        ],
    }


def chain_from_json(data: Any) -> Chain:
    links = tuple(
        ChainEpoch(_direction_from_json(send), _direction_from_json(recv))
        for send, recv in data["links"]
    )
    current_epoch = _int(data["current_epoch"], UINT64_MAX)
    if not links or len(links) > current_epoch + 1:
        raise ValueError("chain links do not match its epoch")
    return Chain(
        direction=Direction(data["direction"]),
        current_epoch=current_epoch,
        send_epoch=_int(data["send_epoch"], current_epoch),
        links=links,
        next_root=unb64(data["next_root"], KEY_SIZE),
        params=params_from_json(data["params"]),
    )


def braid_to_json(state: BraidState) -> dict[str, Any]:
    """One braid state: its name, then its fields by name."""
    out: dict[str, Any] = {"state": STATE_NAMES[type(state)]}
    for field in fields(state):
        value = getattr(state, field.name)
        if isinstance(value, Authenticator):
            out[field.name] = [b64(value.root_key), b64(value.mac_key)]
        elif isinstance(value, (PolyEncoder, PolyDecoder)):
            out[field.name] = value.to_json()
        elif isinstance(value, bytes):
            out[field.name] = b64(value)
        else:
            out[field.name] = value
    return out


def braid_from_json(data: Any) -> BraidState:
    cls = BRAID_STATES[data["state"]]
    values: dict[str, Any] = {}
    for field in fields(cls):
        value = data[field.name]
        if field.name == "epoch":
            values["epoch"] = _int(value, UINT64_MAX - 1)
            if values["epoch"] == 0:
                raise ValueError("epoch 0")
        elif field.name == "auth":
            root_key, mac_key = value
            values["auth"] = Authenticator(
                unb64(root_key, AUTH_KEY_SIZE), unb64(mac_key, AUTH_KEY_SIZE)
            )
        elif field.name.startswith("sending_"):
            values[field.name] = PolyEncoder.from_json(value)
        elif field.name.startswith("receiving_"):
            values[field.name] = PolyDecoder.from_json(value)
        else:
            values[field.name] = unb64(value, FIXED_SIZES.get(field.name))
    return cls(**values)
