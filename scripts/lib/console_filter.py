"""Follow scripts/develop's log files and show on the console only what a person needs.

    console_filter.py LOG_FILE...

Prints, prefixed with `develop:`, the errors of our own code: ERROR and CRITICAL lines of
the integration (`custom_components.pacerelle`) and of the emulator (`tests.emulator`).
Everything else (Home Assistant's integrations that cannot work offline, the chat page's
polling) stays in the files, whose paths scripts/develop prints. Files are read from their
end when this starts; a file that is replaced or truncated (a log rotated at a restart)
is read again from its start.
"""

import contextlib
import re
import sys
import time
from pathlib import Path

POLL_SECONDS = 0.5
# "date time LEVEL (thread) [logger] ..." (Home Assistant), "date time LEVEL logger ..." (emulator).
OURS = re.compile(
    r"^\S+ \S+ (ERROR|CRITICAL) (\(\S+\) \[)?(custom_components\.pacerelle|tests\.emulator)\b"
)


class Follower:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.inode: int | None = None
        self.offset = 0
        self.partial = ""
        try:
            stat = path.stat()
        except FileNotFoundError:
            return
        self.inode, self.offset = stat.st_ino, stat.st_size

    def new_lines(self) -> list[str]:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return []
        if stat.st_ino != self.inode or stat.st_size < self.offset:
            self.inode, self.offset, self.partial = stat.st_ino, 0, ""
        if stat.st_size == self.offset:
            return []
        with self.path.open("rb") as file:
            file.seek(self.offset)
            data = file.read()
        self.offset += len(data)
        text = self.partial + data.decode(errors="replace")
        *lines, self.partial = text.split("\n")
        return lines


def main() -> None:
    followers = [Follower(Path(name)) for name in sys.argv[1:]]
    while True:
        for follower in followers:
            for line in follower.new_lines():
                if OURS.search(line):
                    print(f"develop: {line}", file=sys.stderr, flush=True)
        time.sleep(POLL_SECONDS)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
