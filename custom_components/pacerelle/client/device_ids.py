"""The one rule of device-id validity, used by the relay checks and the Signal engine alike.

A Signal device id as the relay and senders write it: canonical ASCII decimal, 1 to
999,999,999 (below 2**31; libsignal's own are 1 to 127). int() maps "007", "+7", " 7",
"7\\n" and "\\u0667" (Arabic-Indic seven) onto device 7 and "1_0" onto 10, and
str.isdigit() takes every Unicode digit: one device must have one spelling. `[0-9]`, not
`\\d`, which matches Unicode digits too. It imports only limits.py: the engine (signal/)
depends on nothing else of the client but these two.
"""

import re
from typing import Final

from .limits import MAX_DEVICE_ID

# At most as many digits as MAX_DEVICE_ID (all nines), no leading zero.
_DEVICE_ID: Final = re.compile(rf"[1-9][0-9]{{0,{len(str(MAX_DEVICE_ID)) - 1}}}")


def is_device_id(value: str) -> bool:
    """True for a device id in its one canonical spelling."""
    return _DEVICE_ID.fullmatch(value) is not None
