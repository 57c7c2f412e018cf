"""Arithmetic in GF(2^16), the field of spqr's erasure code.

Elements are ints in [0, 0xFFFF] read as polynomials over GF(2) (bit k is the
coefficient of x^k), reduced modulo spqr's POLY. Multiplication goes through
log/exp tables built once at import (about 0.6 MB of arrays): x is a
generator of the multiplicative group because POLY is primitive.
"""

from array import array

# x^16 + x^12 + x^3 + x + 1, spqr's `POLY` (a primitive polynomial).
REDUCTION_POLY = 0x1100B
FIELD_SIZE = 1 << 16
MAX_ELEMENT = FIELD_SIZE - 1
# Size of the multiplicative group: logs are taken modulo this.
GROUP_ORDER = FIELD_SIZE - 1
# Stand-in log of zero for the bulk helpers: any real log (< GROUP_ORDER) added
# to it lands in the zero tail of EXP, so zero times anything stays zero.
ZERO_LOG = 2 * GROUP_ORDER


def _build_tables() -> tuple[array[int], array[int]]:
    exp_head = [0] * GROUP_ORDER
    log = [0] * FIELD_SIZE
    value = 1
    for power in range(GROUP_ORDER):
        exp_head[power] = value
        log[value] = power
        value <<= 1
        if value & FIELD_SIZE:
            value ^= REDUCTION_POLY
    # Two periods so that a sum of two logs needs no reduction, then zeros for
    # sums involving ZERO_LOG.
    exp = array("H", exp_head + exp_head + [0] * GROUP_ORDER)
    log[0] = ZERO_LOG
    return exp, array("I", log)


# EXP[k] = x^k for 0 <= k < 2 * GROUP_ORDER, then 0 up to 3 * GROUP_ORDER.
# LOG[a] = k with x^k == a for a != 0; LOG[0] = ZERO_LOG.
EXP, LOG = _build_tables()


def add(a: int, b: int) -> int:
    """a + b (and a - b: the field has characteristic 2)."""
    return a ^ b


def mul(a: int, b: int) -> int:
    """a * b."""
    if a == 0 or b == 0:
        return 0
    return EXP[LOG[a] + LOG[b]]


def div(a: int, b: int) -> int:
    """a / b; like spqr (which computes a * b^(2^16 - 2)), dividing by zero gives 0."""
    if a == 0 or b == 0:
        return 0
    return EXP[LOG[a] + GROUP_ORDER - LOG[b]]


def mul_slow(a: int, b: int) -> int:
    """a * b by shift-and-add then reduction, independent of the tables (for tests)."""
    product = 0
    for shift in range(16):
        if b >> shift & 1:
            product ^= a << shift
    for bit in range(31, 15, -1):
        if product >> bit & 1:
            product ^= REDUCTION_POLY << (bit - 16)
    return product
