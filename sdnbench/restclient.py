"""A small JSON-over-HTTP client for controllers' northbound APIs (stdlib only).

Controllers answer errors with a status and a body that says why (RESTCONF's
`errors` object, ONOS's `message`), so a reply is returned whatever its status
and the caller decides; only a connection that fails raises.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any


@dataclass
class Reply:
    """Status and body of one HTTP exchange."""

    status: int
    text: str

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300

    def json(self) -> Any:
        """The body parsed as JSON (None when empty)."""
        return json.loads(self.text) if self.text.strip() else None

    def brief(self, limit: int = 300) -> str:
        """Status and the start of the body, for error messages."""
        return f"HTTP {self.status}: {' '.join(self.text.split())[:limit]}"


class RestClient:
    """Requests to one base URL with optional basic authentication and a JSON content type."""

    def __init__(self, base_url: str, basic_auth: str | None = None, timeout_s: float = 10.0,
                 content_type: str = "application/json"):
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.headers = {"Accept": content_type, "Content-Type": content_type}
        if basic_auth:
            self.headers["Authorization"] = "Basic " + base64.b64encode(basic_auth.encode()).decode()

    def request(self, method: str, path: str, body: Any = None) -> Reply:
        """One request; OSError (connection refused, timeout) when no HTTP answer came."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=self.headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                return Reply(resp.status, resp.read().decode(errors="replace"))
        except urllib.error.HTTPError as err:
            return Reply(err.code, err.read().decode(errors="replace"))
        except urllib.error.URLError as err:
            reason = err.reason
            raise reason if isinstance(reason, OSError) else OSError(str(reason)) from None

    def get(self, path: str) -> Reply:
        """GET path."""
        return self.request("GET", path)
