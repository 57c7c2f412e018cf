"""scripts/develop's ports: whether one is free, and whether our own process serves it.

    develop_ports.py free PORT HOST...   exit 1 if a server of HOST (all: "") cannot bind PORT
    develop_ports.py serves PID PORT     exit 1 if PID holds no listening socket on PORT

`free` binds as asyncio's servers do (SO_REUSEADDR, IPv6 only on IPv6 sockets), so it
fails exactly where Home Assistant's or the emulator's bind would. `serves` tells our
Home Assistant or emulator from another program answering on the port (another
checkout's emulator, a Home Assistant already on 8123): it reads the listening sockets of
/proc/net/tcp and tcp6 and looks for them among PID's open files. Without /proc it
answers yes (exit 0): the URL answering is then all that is known.
"""

import contextlib
import errno
import os
import socket
import sys
from pathlib import Path

# /proc/net/tcp's state column: 0A is LISTEN.
LISTEN = "0A"


def bindable(host: str, port: int) -> bool:
    """Whether a server could listen on `host` ("" for every interface) and `port`."""
    every = host == ""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    targets = [("0.0.0.0", socket.AF_INET), ("::", socket.AF_INET6)] if every else [(host, family)]
    for address, family in targets:
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            if every:
                continue  # no IPv6 here: asyncio skips the family too
            raise
        with sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind((address, port))
            except OSError as err:
                if every and err.errno == errno.EADDRNOTAVAIL:
                    continue
                return False
    return True


def listeners(port: int, proc: Path = Path("/proc")) -> list[tuple[str, str]] | None:
    """The sockets listening on `port`: (address, inode) each, the address as in
    /proc/net/tcp (hexadecimal); None without /proc/net."""
    found: list[tuple[str, str]] | None = None
    for name in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        found = found or []
        for line in lines:
            fields = line.split()
            address, _, local_port = fields[1].rpartition(":")
            if fields[3] == LISTEN and int(local_port, 16) == port:
                found.append((address, fields[9]))
    return found


def serves(pid: int, port: int, proc: Path = Path("/proc")) -> bool:
    """Whether process `pid` holds a socket listening on `port` (True without /proc)."""
    found = listeners(port, proc)
    if found is None:
        return True
    inodes = {inode for _, inode in found}
    held: set[str] = set()
    with contextlib.suppress(OSError):
        for fd in os.scandir(proc / str(pid) / "fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(fd.path)
                if target.startswith("socket:["):
                    held.add(target[len("socket:[") : -1])
    return bool(inodes & held)


def main() -> None:
    command = sys.argv[1]
    if command == "free":
        port = int(sys.argv[2])
        sys.exit(0 if all(bindable(host, port) for host in sys.argv[3:] or [""]) else 1)
    if command == "serves":
        sys.exit(0 if serves(int(sys.argv[2]), int(sys.argv[3])) else 1)
    raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
