"""Serve the dashboard with uvicorn: on loopback by default, with a token anywhere else.

`Dashboard` binds its socket itself, so the address printed is the one served
(port 0 picks a free port), and runs uvicorn in a background thread beside a
campaign, or in the foreground for `sdnbench dashboard RUN`.
"""

from __future__ import annotations

import secrets
import socket
import threading
from pathlib import Path

from ..addresses import is_loopback
from ..errors import SdnbenchError
from .app import make_app
from .live import LiveRun

DEFAULT_LISTEN = "127.0.0.1:8765"


def parse_listen(text: str) -> tuple[str, int]:
    """HOST:PORT (IPv6 in brackets) -> (host, port); SdnbenchError when malformed."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise SdnbenchError(f"--listen {text}: expected HOST:PORT, e.g. {DEFAULT_LISTEN}")
    return host, int(port)


class Dashboard:
    """A dashboard server over one run directory's LiveRun."""

    def __init__(self, rundir: Path, listen: str = DEFAULT_LISTEN, token: str | None = None):
        import uvicorn

        self.live = LiveRun(rundir)
        host, port = parse_listen(listen)
        self.token = None if is_loopback(host) else (token or secrets.token_urlsafe(18))
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((host, port))
        except OSError as exc:
            self.sock.close()
            raise SdnbenchError(f"dashboard: cannot listen on {listen}: {exc.strerror}") from None
        self.host, self.port = host, self.sock.getsockname()[1]
        self.closing = threading.Event()
        config = uvicorn.Config(make_app(self.live, self.token, self.closing), log_level="warning",
                                timeout_graceful_shutdown=2, lifespan="off")
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address (with the token when one is needed)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/" + (f"?token={self.token}" if self.token else "")

    def start(self) -> "Dashboard":
        """Serve in a background thread (beside a campaign)."""
        self.live.start()
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                        name="dashboard-http", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until Ctrl-C or SIGTERM (uvicorn handles both)."""
        self.live.start()
        try:
            self.server.run(sockets=[self.sock])
        finally:
            self.closing.set()
            self.live.stop()
            self.sock.close()

    def stop(self) -> None:
        """End the event streams, stop the server and the store follower."""
        self.closing.set()
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.live.stop()
        self.sock.close()
