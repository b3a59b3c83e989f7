"""A real local HTTP receiver of webhook events, answering with the statuses it is told to."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """Listens on 127.0.0.1; answers each POST with the next of `statuses` (then 200), after `delay`."""

    def __init__(self, statuses: list[int] | None = None, delay: float = 0.0) -> None:
        self.statuses = list(statuses or [])
        self.delay = delay
        self.received: list[tuple[dict[str, str], bytes, int]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                time.sleep(owner.delay)
                status = owner.statuses.pop(0) if owner.statuses else 200
                owner.received.append((dict(self.headers.items()), body, status))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self) -> list[dict[str, Any]]:
        """The bodies of the events answered with a 2xx, in arrival order."""
        return [json.loads(body) for _, body, status in self.received if 200 <= status < 300]

    def close(self) -> None:
        """Stop listening."""
        self.server.shutdown()
        self.server.server_close()
