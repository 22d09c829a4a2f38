"""An append-only log of dashboard events that many readers follow at their own pace.

Writers are the campaign's thread and the store follower; readers are the
server's event streams. A reader that falls further behind than the log keeps
is told so and starts again from a fresh snapshot.
"""

from __future__ import annotations

import threading
from collections import deque


class EventLog:
    """Numbered (kind, data) events; the newest `keep` are kept."""

    def __init__(self, keep: int = 2000):
        self._events: deque[tuple[int, str, dict]] = deque(maxlen=keep)
        self._next = 0
        self._lock = threading.Lock()

    def publish(self, kind: str, data: dict) -> None:
        """Append one event."""
        with self._lock:
            self._events.append((self._next, kind, data))
            self._next += 1

    @property
    def cursor(self) -> int:
        """The number the next event will get: a reader starting now reads from here."""
        with self._lock:
            return self._next

    def since(self, cursor: int) -> tuple[list[tuple[int, str, dict]], int, bool]:
        """Events numbered cursor and later, the cursor after them, and whether some were lost."""
        with self._lock:
            first = self._events[0][0] if self._events else self._next
            return [e for e in self._events if e[0] >= cursor], self._next, cursor < first
