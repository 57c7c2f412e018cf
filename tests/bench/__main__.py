"""scripts/bench: print the project's performance figures.

python -m tests.bench               system figures (real hass and emulator), then crypto
python -m tests.bench --crypto      only the Signal engine beside the reference peer
python -m tests.bench --system      only the system figures
python -m tests.bench --latency     only the event latency (one agent; a minute)
python -m tests.bench --system --state busy
                                    the event latency of an agent whose store holds the
                                    busy state (tests/helpers/store_states.py; seeded.py)
python -m tests.bench --profile     hass under cProfile during the latency loop (hass_profile.py)
python -m tests.bench --store       the .enc store beside the per-record store (store.py)
python -m tests.bench --load        where a per-record store's load goes, phase by phase
                                    (load_phases.py)
python -m tests.bench --soak [--months N] [--scale X] [--trace]
                                    a busy household's simulated months, one row each
                                    (soak.py); --trace adds tracemalloc's grown sites
python -m tests.bench --emulator [--messages N]
                                    the demo emulator's own CPU and writes per message, fresh
                                    and after N messages (emulator.py)
"""

import argparse

from tests.bench import crypto, emulator, hass_profile, load_phases, soak, store, system
from tests.helpers.store_states import SHAPES


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench", description=__doc__)
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--crypto", action="store_true", help="only the crypto figures")
    only.add_argument("--system", action="store_true", help="only the system figures")
    only.add_argument("--latency", action="store_true", help="only the event latency")
    only.add_argument("--profile", action="store_true", help="cProfile of hass, per message")
    only.add_argument("--store", action="store_true", help="old and new store, per commit")
    only.add_argument("--load", action="store_true", help="a store's load, phase by phase")
    only.add_argument("--emulator", action="store_true", help="the emulator's own cost")
    only.add_argument("--soak", action="store_true", help="a busy household's year")
    parser.add_argument("--months", type=int, default=12, help="with --soak")
    parser.add_argument("--scale", type=float, default=1.0, help="with --soak: traffic")
    parser.add_argument("--trace", action="store_true", help="with --soak: tracemalloc")
    parser.add_argument("--messages", type=int, default=5000, help="with --emulator")
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument(
        "--state",
        choices=list(SHAPES),
        help="with --system, --latency or --profile: the agent's store",
    )
    args = parser.parse_args()
    if args.state is not None:
        if not (args.system or args.latency or args.profile):
            parser.error("--state goes with --system, --latency or --profile")
        run = hass_profile.run if args.profile else system.run
        for line in run(state=args.state):
            print(line, flush=True)
        return
    lines = _only(args)
    if lines is not None:
        for line in lines:
            print(line, flush=True)
        return
    if not args.crypto:
        for line in system.run():
            print(line, flush=True)
    if not args.system:
        for line in crypto.run(args.conversations, args.rounds):
            print(line, flush=True)


def _only(args: argparse.Namespace) -> list[str] | None:
    """The figures of a single-benchmark option, or None without one."""
    runs = {
        "emulator": lambda: emulator.run(args.messages),
        "soak": lambda: soak.run(args.months, args.scale, trace=args.trace),
        "store": store.run,
        "load": load_phases.run,
        "profile": hass_profile.run,
        "latency": lambda: system.run(latency_only=True),
    }
    chosen = next((run for option, run in runs.items() if getattr(args, option)), None)
    return None if chosen is None else chosen()


if __name__ == "__main__":
    main()
