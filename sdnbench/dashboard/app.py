"""The dashboard's ASGI app: the page, its state as JSON, server-sent events, and /metrics.

With a token (the server is reachable from other machines) every request must
carry it: `?token=` once (the page then keeps it in a cookie), or an
`Authorization: Bearer` header (Prometheus' `authorization` setting).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .live import LiveRun
from .prometheus import metrics_text

STATIC = Path(__file__).parent / "static"
COOKIE = "sdnbench_token"
#: How often an event stream looks for new events, and sends a comment to keep idle connections open.
POLL_S, KEEPALIVE_S = 0.25, 15.0


def sse(kind: str, data: dict, number: int | None = None) -> str:
    """One server-sent event."""
    head = f"id: {number}\n" if number is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, allow_nan=False)}\n\n"


class TokenGate(BaseHTTPMiddleware):
    """401 for a request without the token; a valid ?token= is kept in a cookie for the page's own requests."""

    def __init__(self, app, token: str):
        super().__init__(app)
        self.token = token

    async def dispatch(self, request, call_next):
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        given = request.query_params.get("token") or bearer or request.cookies.get(COOKIE, "")
        if not secrets.compare_digest(given.encode(), self.token.encode()):
            return PlainTextResponse("a token is required: open the URL sdnbench printed (…?token=…)", 401)
        response = await call_next(request)
        if request.query_params.get("token"):
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict")
        return response


def make_app(live: LiveRun, token: str | None = None, closing: threading.Event | None = None) -> Starlette:
    """The app serving live; closing ends its event streams (the server is stopping)."""
    closing = closing or threading.Event()

    async def index(request):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def state(request):
        return JSONResponse(live.snapshot())

    async def metrics(request):
        return Response(metrics_text(live), media_type="text/plain; version=0.0.4; charset=utf-8")

    async def events(request):
        async def stream():
            snap = live.snapshot()
            cursor, idle = snap["cursor"], 0.0
            yield sse("snapshot", snap)
            while not closing.is_set() and not await request.is_disconnected():
                new, cursor, lost = live.log.since(cursor)
                if lost:   # fell behind the log: start again from the state
                    snap = live.snapshot()
                    cursor, new = snap["cursor"], []
                    yield sse("snapshot", snap)
                for number, kind, data in new:
                    yield sse(kind, data, number)
                idle = 0.0 if new else idle + POLL_S
                if idle >= KEEPALIVE_S:
                    idle = 0.0
                    yield ": keep-alive\n\n"
                await asyncio.sleep(POLL_S)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    routes = [Route("/", index), Route("/api/state", state), Route("/events", events), Route("/metrics", metrics),
              Mount("/static", StaticFiles(directory=STATIC), name="static")]
    return Starlette(routes=routes, middleware=[Middleware(TokenGate, token=token)] if token else [])
