"""A local HTTP/1.1 server on 127.0.0.1 that fails on purpose in known patterns."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: A rule gets (1-based request number, seconds since the first request) and
#: returns (status, seconds to pause between the response head and its body).
Rule = Callable[[int, float], tuple[int, float]]


def every_nth(n: int, status: int = 500) -> Rule:
    """Every n-th request (n, 2n, …) in arrival order fails with `status`."""
    return lambda i, t: (status if i % n == 0 else 200, 0.0)


class BurstAfter:
    """The first `count` requests arriving at or after `at_s` fail with `status`."""

    def __init__(self, at_s: float, count: int, status: int = 503):
        self.at_s, self.count, self.status = at_s, count, status
        self.first: int | None = None

    def __call__(self, i: int, t: float) -> tuple[int, float]:
        if self.first is None and t >= self.at_s:
            self.first = i
        failing = self.first is not None and self.first <= i < self.first + self.count
        return (self.status if failing else 200, 0.0)


def head_body_gap(gap_s: float) -> Rule:
    """Every response pauses gap_s between its head and its body (a forced mid-response stall)."""
    return lambda i, t: (200, gap_s)


class FaultyServer:
    """Runs in a thread; `served` counts requests and `failed` the deliberate failures."""

    def __init__(self, rule: Rule, delay_s: float = 0.0):
        self.rule, self.delay_s = rule, delay_s
        self.lock = threading.Lock()
        self.served = 0
        self.failed = 0
        self.t0: float | None = None
        self.httpd = _Server(("127.0.0.1", 0), _handler(self))
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def decide(self) -> tuple[int, float]:
        """Numbers this request and applies the rule (under the lock, in arrival order)."""
        with self.lock:
            now = time.monotonic()
            if self.t0 is None:
                self.t0 = now
            self.served += 1
            status, gap = self.rule(self.served, now - self.t0)
            self.failed += status >= 400
            return status, gap

    def __enter__(self) -> "FaultyServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512


def _handler(server: FaultyServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if server.delay_s:
                time.sleep(server.delay_s)
            status, gap = server.decide()
            body = b'{"ok": true}' if status < 400 else b'{"error": "on purpose"}'
            head = (f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n").encode()
            # One write per part, straight to the socket: no Nagle pause unless asked for.
            if gap:
                self.connection.sendall(head)
                time.sleep(gap)
                self.connection.sendall(body)
            else:
                self.connection.sendall(head + body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self.do_GET()

        def log_message(self, *args) -> None:
            pass

    return Handler


__all__ = ["FaultyServer", "BurstAfter", "every_nth", "head_body_gap"]
