"""scripts/bench: print the project's performance figures.

python -m tests.bench --crypto      the Signal engine beside the reference peer
"""

import argparse

from tests.bench import crypto


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench", description=__doc__)
    parser.add_argument("--crypto", action="store_true", help="only the crypto figures")
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    for line in crypto.run(args.conversations, args.rounds):
        print(line)


if __name__ == "__main__":
    main()
