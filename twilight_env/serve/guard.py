"""What ``twilight serve`` checks on every request before a route sees it, and adds to every answer.

:class:`Guard` is an ASGI middleware (it wraps the Starlette app) that

- serves only requests whose ``Host`` header names this server: ``localhost``,
  ``127.0.0.1``, ``[::1]``, the address it is bound to and names given with
  ``--allow-host`` (any port); a foreign name (DNS rebinding) gets 400;
- refuses a request whose ``Origin`` header is not this server's own origin (scheme and
  the request's ``Host``), and an ``/api/`` request that a browser marks as sent by
  another site (``Sec-Fetch-Site: cross-site`` or ``same-site``), with 403; requests
  without these headers (``curl``, scripts) pass;
- when a token is set (``twilight serve --allow-remote``), refuses every request without
  it (403): the token comes as ``?token=`` in the address (the answer then sets it as
  an ``HttpOnly`` cookie, ``SameSite=Strict``), as the cookie, or as the header
  ``Authorization: token T`` (or ``Bearer T``);
- refuses a ``POST`` body that is not ``application/json`` (optionally with
  ``charset=utf-8``) with 415;
- adds ``Content-Security-Policy``, ``X-Frame-Options: DENY``,
  ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` and
  ``Cross-Origin-Resource-Policy: same-origin`` to every answer, and
  ``Cache-Control: no-store`` to API answers.

:func:`read_body` reads a request body in chunks and stops at ``limit + 1`` bytes, so a
body over the limit (chunked or not, whatever its ``Content-Length`` says) is refused
with 413 without being held in memory.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import socket
from http.cookies import SimpleCookie
from typing import Any, Iterable
from urllib.parse import parse_qs, urlsplit

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""The Content-Security-Policy of every answer: the page loads only its own files, runs no
inline script or style, and may not be framed."""

SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
TOKEN_COOKIE = "twilight_token"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


class BodyError(Exception):
    """A request body refused before it is parsed: ``status`` (413, 415) and ``message``."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def is_loopback(host: str) -> bool:
    """True if ``host`` (a name or an address, IPv6 with or without brackets) is this machine only."""
    h = host.strip().strip("[]").lower()
    if h == "localhost" or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """True for an address that binds every interface (``0.0.0.0``, ``::``, empty)."""
    h = host.strip().strip("[]")
    if not h:
        return True
    try:
        return ipaddress.ip_address(h).is_unspecified
    except ValueError:
        return False


def machine_names() -> set[str]:
    """This machine's host name, full name and addresses (for a server bound to every interface)."""
    names = set()
    for fn in (socket.gethostname, socket.getfqdn):
        try:
            names.add(fn().lower())
        except OSError:
            pass
    for n in list(names):
        try:
            names |= {ai[4][0].lower() for ai in socket.getaddrinfo(n, None)}
        except OSError:
            pass
    return {n for n in names if n}


def trusted_hosts(bound: str | None = None, extra: Iterable[str] = ()) -> set[str]:
    """The host names a ``Host`` header may carry (lower case, IPv6 without brackets).

    Args:
        bound: the address the server is bound to (``--host``); a wildcard adds
            :func:`machine_names`.
        extra: further names (``--allow-host``).
    """
    hosts = set(LOOPBACK_NAMES)
    if bound:
        if is_wildcard(bound):
            hosts |= machine_names()
        else:
            hosts.add(bound.strip().strip("[]").lower())
    hosts |= {h.strip().strip("[]").lower() for h in extra if h.strip()}
    return hosts


def host_name(netloc: str) -> str | None:
    """The host part of ``name[:port]`` or ``[v6][:port]`` (lower case, no brackets), or None if malformed."""
    try:
        parts = urlsplit("//" + netloc)
        port = parts.port  # raises ValueError on a bad port
        del port
    except ValueError:
        return None
    if parts.username is not None or parts.password is not None or parts.path or not parts.hostname:
        return None
    return parts.hostname.lower()


def json_content_type(value: str | None) -> bool:
    """True if a ``Content-Type`` header is ``application/json``, optionally with ``charset=utf-8``."""
    if not value:
        return False
    kind, *params = [p.strip() for p in value.split(";")]
    if kind.lower() != "application/json":
        return False
    for p in params:
        if not p:
            continue
        k, _, v = p.partition("=")
        if k.strip().lower() != "charset" or v.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True


async def read_body(request, limit: int) -> bytes:
    """The request body, read chunk by chunk and refused as soon as it passes ``limit`` bytes.

    Raises:
        BodyError: 413 when the declared ``Content-Length`` or the bytes received pass
            ``limit`` (the rest is not read); 400 when the connection closed before the
            body's end (the client went away, or sent too slowly).
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyError(413, f"the request body is {declared} bytes; at most {limit} are accepted")
    from starlette.requests import ClientDisconnect

    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BodyError(413, f"the request body passes {limit} bytes; at most {limit} are accepted")
            chunks.append(chunk)
    except ClientDisconnect:  # gone, or closed for sending too slowly (twilight_env.serve.conn)
        raise BodyError(400, "the request body did not arrive: the connection closed before its end") from None
    return b"".join(chunks)


def _error(status: int, message: str, extra: list | None = None) -> tuple[dict, bytes]:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    return {"type": "http.response.start", "status": status, "headers": headers + (extra or [])}, body


class Guard:
    """ASGI middleware with the checks of the module docstring.

    Args:
        app: the ASGI app to guard.
        hosts: the trusted host names (:func:`trusted_hosts`).
        token: the token every request must carry (:func:`check_token_value`), or None
            (loopback: no token).

    Raises:
        ValueError: a token of other characters than :data:`TOKEN_CHARS` or shorter than 16.
    """

    def __init__(self, app, hosts: Iterable[str], token: str | None = None):
        self.app = app
        self.hosts = {h.lower() for h in hosts}
        self.token = None if token is None else check_token_value(token)

    def _header(self, scope, name: bytes) -> str | None:
        for k, v in scope.get("headers", []):
            if k == name:
                return v.decode("latin-1")
        return None

    def _refusal(self, scope) -> tuple[int, str] | None:
        host = self._header(scope, b"host")
        name = host_name(host) if host else None
        if name is None or name not in self.hosts:
            # the trusted names are not listed: they would tell anyone this machine's names and addresses
            return 400, ("the Host header names no address of this server: use the address twilight serve "
                         "printed (any port); twilight serve --allow-host NAME adds a name")
        origin = self._header(scope, b"origin")
        if origin is not None:
            o = urlsplit(origin)
            if o.scheme not in ("http", "https") or o.netloc.lower() != host.lower():
                return 403, "requests from other sites are refused: the Origin header is not this server's address"
        path = scope.get("path", "")
        site = self._header(scope, b"sec-fetch-site")
        if path.startswith("/api/") and site in ("cross-site", "same-site"):
            return 403, "requests from other sites are refused (Sec-Fetch-Site)"
        if self.token is not None and not self._has_token(scope):
            return 403, ("this server needs its token: open the address it printed (…/?token=…), or send "
                         "the header 'Authorization: token TOKEN'")
        if scope.get("method") == "POST" and not json_content_type(self._header(scope, b"content-type")):
            return 415, "a POST body must be JSON with the header 'Content-Type: application/json'"
        return None

    def _query_token(self, scope) -> str | None:
        q = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        return q.get("token", [None])[0]

    def _has_token(self, scope) -> bool:
        given = []
        auth = self._header(scope, b"authorization")
        if auth:
            kind, _, value = auth.partition(" ")
            if kind.lower() in ("token", "bearer"):
                given.append(value.strip())
        cookie = self._header(scope, b"cookie")
        if cookie:
            try:
                c = SimpleCookie()
                c.load(cookie)
                if TOKEN_COOKIE in c:
                    given.append(c[TOKEN_COOKIE].value)
            except Exception:  # a malformed cookie header: no token from it
                pass
        q = self._query_token(scope)
        if q:
            given.append(q)
        return any(secrets.compare_digest(g.encode(), self.token.encode()) for g in given)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        refusal = self._refusal(scope)
        extra_headers = list(SECURITY_HEADERS)
        if scope.get("path", "").startswith("/api/"):
            extra_headers.append((b"cache-control", b"no-store"))
        if refusal is not None:
            start, body = _error(*refusal, extra=extra_headers + [(b"connection", b"close")])
            await send(start)
            await send({"type": "http.response.body", "body": body})
            return
        if self.token is not None and self._query_token(scope):
            extra_headers.append((b"set-cookie", f"{TOKEN_COOKIE}={self.token}; HttpOnly; SameSite=Strict; "
                                                 "Path=/".encode()))

        started = False

        async def send_with_headers(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + extra_headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:  # answer 500 as JSON with the headers, then let the server log it
            if not started:
                start, body = _error(500, f"internal error ({type(exc).__name__}: {exc}); the game is as before "
                                          "the request if the error came before a move was applied")
                await send_with_headers(start)
                await send({"type": "http.response.body", "body": body})
            raise


def new_token() -> str:
    """A fresh random token (URL-safe text, 256 bits)."""
    return secrets.token_urlsafe(32)


TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
"""The characters a token may hold: ASCII letters, digits, ``-`` and ``_`` (URL-safe, and
the same bytes in an address, a cookie and a header, so every way of sending it works)."""


def check_token_value(token: Any) -> str:
    """A token given on the command line: at least 16 characters of :data:`TOKEN_CHARS`.

    Raises:
        ValueError: naming ``--token`` and what is allowed (a letter outside ASCII, such
            as ``é``, is refused: a cookie or header would carry other bytes than the
            address).
    """
    if not isinstance(token, str) or len(token) < 16 or not set(token) <= TOKEN_CHARS:
        raise ValueError("--token must be at least 16 characters of ASCII letters, digits, '-' and '_'")
    return token
