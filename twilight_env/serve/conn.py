"""Read timeouts of ``twilight serve``'s connections (uvicorn's HTTP/1.1 protocol with deadlines).

uvicorn closes a keep-alive connection that stays idle ``timeout_keep_alive`` seconds
after an answer, and h11 caps the size of a request's headers, but nothing bounds the
time a client may take to send a request: a connection that never sends a byte, or sends
its headers or body a byte at a time, stays open for good and holds a file descriptor.
:class:`TimedH11Protocol` adds two deadlines:

- the headers of a request must have come :attr:`~TimedH11Protocol.header_seconds`
  after the connection opened or the last answer was sent (idle and partial-header
  connections);
- its body must have come :attr:`~TimedH11Protocol.body_seconds` after its headers
  (slow bodies; 4 MiB in 60 s is 70 KB/s).

A connection past a deadline is closed; a route reading the body then sees the client
gone. The time the server takes to answer is not limited here (agent work is bounded by
:mod:`twilight_env.serve.pool` and the advance time budget).
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_SECONDS = 10.0
"""Seconds a connection may take to send a request's headers (from its opening or the last answer)."""
BODY_SECONDS = 60.0
"""Seconds a request may take to send its body once its headers have come."""
KEEP_ALIVE_SECONDS = 5
"""uvicorn's ``timeout_keep_alive``: an idle keep-alive connection is closed this long after an answer."""


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the header and body deadlines of the module docstring.

    Attributes:
        header_seconds: deadline for a request's headers (seconds; a subclass may change it).
        body_seconds: deadline for a request's body after its headers (seconds).
    """

    header_seconds: float = HEADER_SECONDS
    body_seconds: float = BODY_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm(self.header_seconds)

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _reading(self) -> bool:
        """True while the server waits for the client: for headers, or for the rest of a body."""
        cycle = self.cycle
        return cycle is None or cycle.response_complete or (cycle.more_body and not cycle.disconnected)

    def _expire(self) -> None:
        self._deadline = None
        if self._reading() and not self.transport.is_closing():
            self.transport.close()  # connection_lost tells a route reading the body that the client has gone

    def data_received(self, data: bytes) -> None:
        before = self.cycle
        super().data_received(data)
        self._after_events(before)

    def _after_events(self, before) -> None:
        cycle = self.cycle
        if cycle is not None and cycle is not before and not cycle.response_complete:
            # a new request's headers have come: its body (if any) has its own deadline
            if cycle.more_body:
                self._arm(self.body_seconds)
            else:
                self._disarm()
        elif cycle is not None and not cycle.more_body and not cycle.response_complete:
            self._disarm()  # the body is complete: the answer is the server's business

    def on_response_complete(self) -> None:
        before = self.cycle
        super().on_response_complete()
        if self.transport.is_closing():
            self._disarm()
            return
        self._arm(self.header_seconds)  # the next request's headers (a pipelined one may already be here)
        self._after_events(before)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def uvicorn_options() -> dict:
    """Keyword arguments for ``uvicorn.run`` / ``uvicorn.Config``: the protocol with deadlines
    and the keep-alive timeout."""
    return {"http": TimedH11Protocol, "timeout_keep_alive": KEEP_ALIVE_SECONDS}
