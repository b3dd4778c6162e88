"""A real Label Studio CE for the round-trip test: started on loopback with a throw-away data folder and a
known token, once per session, as soon as collection ends (its migrations take most of a minute, which
then overlaps the tests before it); stopped by its process id when the session ends."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

EXECUTABLE_VARIABLE = "EDUFAIR_LABEL_STUDIO"
START_TIMEOUT = 240
# Label Studio is a Django project of its own: none of EduFair's settings may reach it.
PASSED_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
SERVICE = pytest.StashKey["LabelStudio"]()
ADMIN = "researcher@example.org"  # the user Label Studio is started with, who imports


def executable() -> str | None:
    path = os.environ.get(EXECUTABLE_VARIABLE, "")
    return path if path and os.access(path, os.X_OK) else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LabelStudio:
    def __init__(self, path: str):
        self.folder = Path(tempfile.mkdtemp(prefix="edufair-label-studio-"))
        self.token = secrets.token_hex(20)
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        environment = {name: os.environ[name] for name in PASSED_ENVIRONMENT if name in os.environ}
        environment["HOME"] = str(self.folder)  # its own config and caches, thrown away with the folder
        self.log = open(self.folder / "label-studio.log", "wb")  # noqa: SIM115 (closed by stop)
        self.started = time.monotonic()
        self.ready_after: float | None = None
        # The folder holds the data directory and the log (argument list kept apart for readability).
        arguments = ["start", "--internal-host", "127.0.0.1", "--port", str(port), "--no-browser"]
        arguments += ["--data-dir", str(self.folder / "data"), "--username", ADMIN]
        arguments += [f"--password={secrets.token_hex(16)}", "--user-token", self.token, "--enable-legacy-api-token"]
        self.process = subprocess.Popen(
            [path, *arguments],
            cwd=self.folder,
            env=environment,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def tail(self) -> str:
        return (self.folder / "label-studio.log").read_bytes()[-3000:].decode(errors="replace")

    def wait_ready(self) -> float:
        """Seconds from start to the first healthy answer."""
        while self.ready_after is None:
            if self.process.poll() is not None:
                raise AssertionError(f"Label Studio exited with {self.process.returncode}: {self.tail()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as response:
                    if response.status == 200:
                        self.ready_after = time.monotonic() - self.started
                        break
            except OSError:
                pass
            if time.monotonic() - self.started > START_TIMEOUT:
                raise AssertionError(f"Label Studio did not answer /health in {START_TIMEOUT} s: {self.tail()}")
            time.sleep(0.5)
        return self.ready_after

    def call(self, method: str, path: str, body=None):
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Token {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"Label Studio {method} {path}: {exc.code} {exc.read()[:2000]!r}") from None

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def start(config: pytest.Config) -> LabelStudio | None:
    """The session's Label Studio, started now if it is not yet (None without the executable)."""
    if SERVICE in config.stash:
        return config.stash[SERVICE]
    path = executable()
    if path is None:
        return None
    config.stash[SERVICE] = LabelStudio(path)
    return config.stash[SERVICE]


def stop(config: pytest.Config) -> None:
    service = config.stash.get(SERVICE, None)
    if service is not None:
        service.stop()
