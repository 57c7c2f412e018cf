"""Regenerate ../vectors.json from spqr's own encoding code.

Usage: python3 gen_vectors.py [SPQR_SRC]   (default /tmp/ref/spqr/src, spqr v1.5.1)

Copies spqr's encoding.rs, encoding/gf.rs and encoding/polynomial.rs here with
their formal-verification annotations stripped (strip.py; the copies are
git-ignored), builds them with src/main.rs (no crates needed: small stand-ins
for sorted-vec and the protobuf structs), then runs the scenarios below.
Seeded: running it again gives the same file.
"""

import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPQR_SRC = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/ref/spqr/src")
ORACLE = HERE / "target" / "release" / "spqr-oracle"
SEED = 20251130
LENGTHS_ENCODE = [0, 2, 10, 30, 32, 34, 64, 96, 100, 160, 962, 960, 1088, 1152]
LENGTHS_BAD = [1, 3, 1151, 1 << 20, (1 << 20) + 2]
LENGTHS_DECODE = [1152, 1088, 96, 160, 10, 34, 962, 2, 0, 64]
HIGH_INDICES = [100, 255, 256, 1000, 40000, 65534, 65535]


def build() -> None:
    (HERE / "src" / "encoding").mkdir(parents=True, exist_ok=True)
    for name in ("encoding/gf.rs", "encoding/polynomial.rs", "encoding.rs"):
        text = subprocess.run(
            [sys.executable, str(HERE / "strip.py"), str(SPQR_SRC / name)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        text = text.replace("use sorted_vec::SortedSet;", "use crate::sorted_vec::SortedSet;")
        text = text.replace("pub mod round_robin;", "")
        (HERE / "src" / name).write_text(text)
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=HERE, check=True)


def message(seed: int, length: int) -> bytes:
    x = seed
    out = bytearray()
    for _ in range(length):
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        out.append(x >> 56)
    return bytes(out)


def run(lines: list[str]) -> list[str]:
    done = subprocess.run(
        [ORACLE], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()


def op(seed: int, length: int, idx: int, pos: int = 0, val: int = 0) -> str:
    """One decoder input: chunk idx of message(seed, length), byte pos XOR val."""
    return f"{seed}:{length}:{idx}:{pos}:{val}"


def gf_vectors(rng: random.Random) -> list[list[int]]:
    pairs = [(0, 0), (0, 5), (5, 0), (1, 1), (2, 3), (0xFFFF, 0xFFFF), (0x8000, 2)]
    pairs += [(0xF5, 0x93), (0x1234, 0x5678)]
    pairs += [(rng.randrange(65536), rng.randrange(1, 65536)) for _ in range(55)]
    out = []
    for (a, b), line in zip(pairs, run([f"GF {a} {b}" for a, b in pairs]), strict=True):
        product, quotient, const_quotient = map(int, line.split())
        assert quotient == const_quotient
        out.append([a, b, product, quotient])
    return out


def encode_vectors(rng: random.Random) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for length in LENGTHS_ENCODE:
        seed = rng.randrange(2**32)
        n = -(-length // 32)
        indices = [*range(n + 4), *HIGH_INDICES]
        chunks = run([f"ENC {seed} {length} {','.join(map(str, indices))}"])[0].split()
        data = b"".join(bytes.fromhex(h) for h in chunks)
        sample = {str(i): chunks[indices.index(i)] for i in sorted({0, n, n + 1, 65535})}
        out.append(
            {
                "seed": seed,
                "len": length,
                "indices": indices,
                "sha256": hashlib.sha256(data).hexdigest(),
                "sample": sample,
            }
        )
    return out


def scenarios(rng: random.Random, length: int) -> dict[str, list[str]]:
    seed = rng.randrange(2**32)
    other = rng.randrange(2**32)
    n = max(1, -(-length // 32))
    kinds = {
        "systematic": [op(seed, length, i) for i in range(n)],
        "parity_only": [op(seed, length, i) for i in rng.sample(range(n, 3 * n + 2), n + 1)],
        "mixed_dupes": [
            op(seed, length, rng.choice([*range(3 * n), 65535, 40000])) for _ in range(2 * n + 3)
        ],
    }
    conflicts = []
    for _ in range(2 * n + 4):
        r = rng.random()
        idx = rng.choice([*range(2 * n), 65535])
        if r < 0.2:
            conflicts.append(op(seed, length, idx, rng.randrange(32), rng.randrange(1, 256)))
        elif r < 0.3:
            conflicts.append(op(other, length, idx))
        else:
            conflicts.append(op(seed, length, idx))
    kinds["conflicts"] = conflicts
    return {"seed": [str(seed)], **kinds}


def decode_vectors(rng: random.Random) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for length in LENGTHS_DECODE:
        kinds = scenarios(rng, length)
        seed = int(kinds.pop("seed")[0])
        for kind, ops in kinds.items():
            steps_text, points = run([f"DEC {length} " + " ".join(ops)])[0].split(" | ")
            steps = steps_text.split(" ")
            short = [
                s if s == "-" else hashlib.sha256(bytes.fromhex(s)).hexdigest()[:16] for s in steps
            ]
            out.append(
                {
                    "kind": kind,
                    "len": length,
                    "seed": seed,
                    "ops": " ".join(ops),
                    "steps": " ".join(short),
                    "points_sha256": hashlib.sha256(points.encode()).hexdigest(),
                    "final_is_message": steps[-1] != "-"
                    and bytes.fromhex(steps[-1]) == message(seed, length),
                }
            )
    return out


def main() -> None:
    build()
    rng = random.Random(SEED)
    vectors = {
        "message_function": (
            "LCG x=x*6364136223846793005+1442695040888963407 mod 2^64 from x=seed,"
            " byte=x>>56, per byte"
        ),
        "source": (
            "spqr v1.5.1 src/encoding/{gf,polynomial}.rs compiled as-is"
            " (verification annotations stripped)"
        ),
        "gf_mul_div": gf_vectors(rng),
        "encode": encode_vectors(rng),
        "encode_errors": [
            [length, result]
            for length, result in zip(
                LENGTHS_BAD, run([f"ENC 1 {n} 0" for n in LENGTHS_BAD]), strict=True
            )
        ],
        "decode": decode_vectors(rng),
    }
    with (HERE.parent / "vectors.json").open("w") as out:
        json.dump(vectors, out, indent=1)


if __name__ == "__main__":
    main()
