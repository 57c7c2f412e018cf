"""`python -m tests.emulator`: serve a local Pacerelle until interrupted."""

import argparse
import logging
from pathlib import Path

from aiohttp import web

from .access_log import RedactingAccessLogger
from .app import create_app
from .config import DEFAULT_HOST, DEFAULT_PORT, RUNTIME_TOKEN_TTL_SECONDS, EmulatorConfig


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/emulator", description=__doc__)
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument(
        "--state",
        type=Path,
        help="SQLite file that keeps the state across restarts (a JSON one is converted)",
    )
    parser.add_argument(
        "--runtime-token-ttl",
        type=float,
        default=RUNTIME_TOKEN_TTL_SECONDS,
        metavar="SECONDS",
        help="lifetime of runtime tokens (Pacerelle: 900)",
    )
    parser.add_argument(
        "--public-url", help="base URL browsers use, for authorization URLs (default: as called)"
    )
    parser.add_argument("--verbose", action="store_true", help="log every event")
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    config = EmulatorConfig(
        host=args.host,
        port=args.port,
        state_file=args.state,
        runtime_token_ttl=args.runtime_token_ttl,
        public_url=args.public_url,
    )
    web.run_app(
        create_app(config),
        host=config.host,
        port=config.port,
        access_log_class=RedactingAccessLogger,
    )


if __name__ == "__main__":
    main()
