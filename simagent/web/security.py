"""The web server's guards: token for non-loopback binds, request size limit, same-origin writes,
and response headers that keep served run files from ever being rendered as pages.

No CORS middleware is installed: browsers refuse cross-origin reads of the API by default."""

from __future__ import annotations

import hmac
import ipaddress
import json
from urllib.parse import urlsplit

from simagent.errors import RequestError

TOKEN_COOKIE = "simagent_token"
MIN_TOKEN_LENGTH = 16
MAX_BODY_BYTES = 1 << 20  # edited inputs and requests are small; 1 MiB is generous
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy",
     b"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
     b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Loopback needs nothing; any other interface needs a token of at least 16 characters."""
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise RequestError(f"the web token must be at least {MIN_TOKEN_LENGTH} characters long")
    if not is_loopback(host) and not token:
        raise RequestError(f"binding to {host} (not loopback) needs a token: --token or SIMAGENT_WEB_TOKEN")


def token_matches(expected: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


async def _send_error(send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def host_name(host_header: str) -> str:
    """'127.0.0.1:8765' -> '127.0.0.1', '[::1]:8765' -> '[::1]'."""
    if host_header.startswith("["):
        return host_header.split("]")[0] + "]"
    return host_header.rsplit(":", 1)[0] if ":" in host_header else host_header


class Guard:
    """ASGI middleware: size limit, same-origin JSON writes, token, security headers; without a
    token only loopback host names are answered (a page on another site that rebinds its DNS
    name to 127.0.0.1 gets nothing)."""

    def __init__(self, app, token: str | None = None, max_body: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.token = token
        self.max_body = max_body

    def _authorised(self, scope) -> bool:
        if not self.token:
            return True
        auth = _header(scope, b"authorization") or ""
        if auth.lower().startswith("bearer ") and token_matches(self.token, auth[7:].strip()):
            return True
        for part in (_header(scope, b"cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == TOKEN_COOKIE and token_matches(self.token, value):
                return True
        return False

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        method, path = scope["method"], scope["path"]
        if not self.token and host_name(_header(scope, b"host") or "") not in LOOPBACK_NAMES:
            return await _send_error(send, 421, "this server answers only on 127.0.0.1 / localhost")
        length = _header(scope, b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return await _send_error(send, 413, f"request body larger than {self.max_body} bytes")
        if method not in ("GET", "HEAD", "OPTIONS"):
            origin = _header(scope, b"origin")
            if origin is not None and urlsplit(origin).netloc != (_header(scope, b"host") or ""):
                return await _send_error(send, 403, "cross-origin request refused")
            if (_header(scope, b"content-type") or "").split(";")[0].strip() != "application/json":
                return await _send_error(send, 415, "send JSON (content-type: application/json)")
        if path.startswith("/api/") and path != "/api/login" and not self._authorised(scope):
            return await _send_error(send, 401, "token required")

        # Read the whole body first (at most max_body bytes), so an oversized chunked body is
        # refused before the application sees any of it; then replay it.
        chunks, received, more = [], 0, method not in ("GET", "HEAD", "OPTIONS")
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return
            chunks.append(message.get("body", b""))
            received += len(chunks[-1])
            if received > self.max_body:
                return await _send_error(send, 413, f"request body larger than {self.max_body} bytes")
            more = message.get("more_body", False)
        replay = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}] if chunks else []

        async def replayed_receive():
            return replay.pop(0) if replay else await receive()

        async def with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, replayed_receive, with_headers)
