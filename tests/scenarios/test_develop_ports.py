"""scripts/develop's ports (issue 37, point 7): a taken port stops it with the option that
changes it and no "ready"; another program on a port is never taken for its own; Ctrl-C
ends it with "develop: stopped" and exit code 0.

The script runs for real (as a process group of its own, as from a terminal) against real
listening sockets: a plain one where Home Assistant would serve, another checkout's
emulator (its own process) where the emulator would.
"""

import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers.develop import ROOT, develop_config, script_module

develop_ports = script_module("develop_ports")

DEVELOP = ROOT / "scripts" / "develop"
# scripts/setup (done already: a second) and the checks; no Home Assistant starts.
REFUSAL_TIMEOUT = 120.0
# Up to Home Assistant's first start, then its shutdown after Ctrl-C.
START_TIMEOUT = 120.0
STOP_TIMEOUT = 60.0
POLL_SECONDS = 0.1


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def listening(host: str = "127.0.0.1") -> Iterator[int]:
    """A real server socket on a free port (what another program holds)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1):
            return True
    except OSError:
        return False


def wait_until(condition: Callable[[], bool], within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"not within {within} s: {what}"
        time.sleep(POLL_SECONDS)


@contextmanager
def other_checkouts_emulator() -> Iterator[int]:
    """An emulator of another checkout: its own process, on its own port."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.emulator", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: answers(f"http://127.0.0.1:{port}/_emulator/faults"), 30, "the emulator")
        yield port
    finally:
        process.terminate()
        process.wait(10)


def develop(
    config: Path, ha_port: int, emulator_port: int, console: Path
) -> subprocess.Popen[bytes]:
    with console.open("wb") as output:
        return subprocess.Popen(
            [
                str(DEVELOP),
                *("--config", str(config)),
                *("--ha-port", str(ha_port)),
                *("--emulator-port", str(emulator_port)),
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: Ctrl-C reaches it as from a terminal
        )


def refused(config: Path, ha_port: int, emulator_port: int, console: Path) -> str:
    """Runs scripts/develop to its end, which must be an error; returns its console."""
    process = develop(config, ha_port, emulator_port, console)
    try:
        assert process.wait(REFUSAL_TIMEOUT) == 1, console.read_text()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return console.read_text()


# Another program on this machine only, or on every interface (as Home Assistant is).
@pytest.mark.parametrize("occupant", ["127.0.0.1", "0.0.0.0"])
def test_a_taken_home_assistant_port_stops_it(
    tmp_path: Path, occupant: str, socket_enabled: None
) -> None:
    emulator_port = free_port()
    with listening(occupant) as ha_port:
        console = refused(tmp_path / "config", ha_port, emulator_port, tmp_path / "console")
    assert f"error: port {ha_port}, Home Assistant's, is taken by another program" in console
    assert "--ha-port PORT" in console
    assert "develop: ready" not in console
    # Nothing started, nothing written: the same directory takes another --ha-port.
    assert not answers(f"http://127.0.0.1:{emulator_port}/_emulator/faults")
    assert not (tmp_path / "config" / "configuration.yaml").exists()


def test_an_existing_directory_says_where_its_port_is_kept(
    tmp_path: Path, socket_enabled: None
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    with listening() as ha_port:
        assert develop_config.write_new_configuration(config, ha_port)
        console = refused(config, free_port(), free_port(), tmp_path / "console")
    assert f"error: port {ha_port}, Home Assistant's, is taken" in console
    assert f"--config DIR --ha-port PORT ({config} keeps port {ha_port}" in console
    assert "develop: ready" not in console


def test_an_existing_directory_on_every_interface_is_told(
    tmp_path: Path, socket_enabled: None
) -> None:
    """A directory made before 127.0.0.1 was written (no `.storage/http`) is told so."""
    config = tmp_path / "config"
    config.mkdir()
    assert develop_config.write_new_configuration(config, free_port())
    (config / ".storage" / "http").unlink()
    with listening() as emulator_port:
        console = refused(config, free_port(), emulator_port, tmp_path / "console")
    assert "--emulator-port PORT" in console
    assert f"develop: {config} listens on every interface, not only 127.0.0.1" in console


def test_another_checkouts_emulator_is_not_taken_for_its_own(
    tmp_path: Path, socket_enabled: None
) -> None:
    ha_port = free_port()
    with other_checkouts_emulator() as emulator_port:
        console = refused(tmp_path / "config", ha_port, emulator_port, tmp_path / "console")
    assert f"error: port {emulator_port}, the Pacerelle emulator's, is taken" in console
    assert "--emulator-port PORT" in console
    assert "develop: ready" not in console
    assert "Pacerelle emulator on" not in console
    assert not answers(f"http://127.0.0.1:{ha_port}/manifest.json")


class _Manifest(http.server.BaseHTTPRequestHandler):
    """Another web server: it answers Home Assistant's /manifest.json too."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


def test_another_server_answering_is_not_taken_for_its_home_assistant(
    tmp_path: Path, socket_enabled: None
) -> None:
    """The port is free at the check and taken before Home Assistant binds it: the
    answer comes from another program, so there is no "ready" but the error."""
    ha_port, emulator_port = free_port(), free_port()
    console = tmp_path / "console"
    process = develop(tmp_path / "config", ha_port, emulator_port, console)
    try:
        # Past the check, before Home Assistant starts: the emulator is up.
        wait_until(
            lambda: "develop: Pacerelle emulator on" in console.read_text(),
            START_TIMEOUT,
            "the emulator",
        )
        with http.server.ThreadingHTTPServer(("127.0.0.1", ha_port), _Manifest) as server:
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            try:
                assert process.wait(START_TIMEOUT) == 1, console.read_text()
            finally:
                server.shutdown()
                thread.join()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    text = console.read_text()
    assert f"error: port {ha_port}, Home Assistant's, is taken by another program" in text
    assert "--ha-port PORT" in text
    assert "develop: ready" not in text
    # Its own Home Assistant and emulator were stopped.
    assert develop_ports.bindable("127.0.0.1", emulator_port)
    assert develop_ports.bindable("", ha_port)


def test_ctrl_c_stops_it_cleanly(tmp_path: Path, socket_enabled: None) -> None:
    ha_port, emulator_port = free_port(), free_port()
    console = tmp_path / "console"
    process = develop(tmp_path / "config", ha_port, emulator_port, console)
    try:
        wait_until(
            lambda: "develop: Home Assistant starting" in console.read_text(),
            START_TIMEOUT,
            "Home Assistant starting",
        )
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(STOP_TIMEOUT) == 0, console.read_text()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    lines = console.read_text().strip().splitlines()
    assert lines[-1] == "develop: stopped", lines
    assert not [line for line in lines if "error" in line.lower()], lines
    # Both ports are free again: nothing outlived it.
    assert develop_ports.bindable("", ha_port)
    assert develop_ports.bindable("127.0.0.1", emulator_port)


@pytest.mark.parametrize("host", ["127.0.0.1", ""])
def test_a_taken_port_is_not_bindable(host: str, socket_enabled: None) -> None:
    with listening() as port:
        assert not develop_ports.bindable(host, port)
    assert develop_ports.bindable(host, port)


def test_only_the_process_holding_the_socket_serves_it(socket_enabled: None) -> None:
    """Another program answering on the port (another checkout's emulator) is not ours."""
    with listening() as port:
        assert develop_ports.serves(os.getpid(), port)
        other = subprocess.Popen(["sleep", "60"])
        try:
            assert not develop_ports.serves(other.pid, port)
        finally:
            other.kill()
            other.wait()
    assert not develop_ports.serves(os.getpid(), port)


def test_without_proc_only_the_answer_counts(tmp_path: Path) -> None:
    assert develop_ports.listeners(8123, tmp_path) is None
    assert develop_ports.serves(1, 8123, tmp_path)
