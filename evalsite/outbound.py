"""Which hosts the server itself may send requests to, on a project admin's say-so.

A project admin types the URL (a judge's base URL, a webhook's endpoint), but the server makes
the request: an arbitrary URL would let them reach hosts only the server can see (cloud metadata,
the database, internal admin pages). So each kind of outbound request has an operator setting
listing the hosts it may reach (JUDGE_ALLOWED_HOSTS, WEBHOOK_ALLOWED_HOSTS), read by this one rule:
an entry `host:port` allows that port only; a bare `host` allows ports 80 and 443 only, so
allowing `127.0.0.1` for one local server does not open the database's port or the site's own
admin on it. Judging and reviews both use it (reviews never imports judging).
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

WEB_PORTS = frozenset({80, 443})


class HostRefused(ValueError):
    """A URL or setting entry the operator has not allowed; the message names the setting."""


def url_origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, lower-case host, port, the scheme's default when the URL names none)."""
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def allowed_entry(entry: str, setting: str) -> tuple[str, frozenset[int]]:
    """`host`, `host:port`, `[v6]` or `[v6]:port` -> (host, the ports it allows)."""
    host, port = entry.strip().lower(), None
    if host.startswith("["):
        host, _, rest = host[1:].partition("]")
        port = rest.removeprefix(":") if rest else None
    elif host.count(":") == 1:
        host, port = host.split(":")
    if not host or (port is not None and not (port.isdigit() and 0 < int(port) < 65536)):
        raise HostRefused(
            f"{setting}: {entry!r} is not a host or host:port; an operator must fix it"
        )
    return host, WEB_PORTS if port is None else frozenset({int(port)})


def host_allowed(host: str, port: int | None, entries: Iterable[str], setting: str) -> bool:
    return any(
        host == allowed and port in ports
        for allowed, ports in (allowed_entry(entry, setting) for entry in entries)
    )


def listed(entries: Iterable[str]) -> list[str]:
    """The setting's entries as a page shows them."""
    return [entry.strip() for entry in entries if entry.strip()]


def url_parts_check(url: str, field: str) -> tuple[str, str, int | None]:
    """`url` is an http(s) URL with a host and no user:password@ part; returns its origin."""
    try:
        parts = urlsplit(url)
        origin = url_origin(url)
    except ValueError:
        raise HostRefused(f"{field}: {url!r} is not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HostRefused(f"{field}: only http:// or https:// URLs with a host")
    if parts.username or parts.password:
        raise HostRefused(f"{field}: no user name or password in the URL")
    return origin


def host_refusal(field: str, host: str, port: int | None, setting: str) -> HostRefused:
    entry = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"  # an IPv6 literal: bracketed
    return HostRefused(
        f"{field}: host {host!r} port {port} is not allowed on this server; an operator can "
        f"add {entry} to {setting} (a bare host allows ports 80 and 443 only)"
    )
