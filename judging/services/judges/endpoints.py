"""Where a judge may send requests, and which environment variable it may send as its key.

A project admin configures judges, but the server makes the calls: an arbitrary base URL would let
them reach hosts only the server can see (cloud metadata, the database, internal admin pages),
and an arbitrary variable name would send any of the server's secrets (SECRET_KEY, DATABASE_URL)
as a bearer token to a host they choose. So both are limited by operator settings:

- base URL: empty (the provider's default), the origin of a provider's default, or an entry of
  JUDGE_ALLOWED_HOSTS (http/https only, no user:password@ part). An entry `host:port` allows
  that port only; a bare `host` allows ports 80 and 443 only, so allowing `127.0.0.1` for a
  model server does not open the database's port or the site's own admin on it;
- key variable: one of JUDGE_API_KEY_ENVS.

Checked when a judge is saved and again before every run (settings can change in between).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from judging.providers import PROVIDERS


class EndpointRefused(ValueError):
    """A base URL or key variable the operator has not allowed; the message names the setting."""


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def _default_origins() -> set[tuple[str, str, int | None]]:
    return {_origin(cls.default_base_url) for cls in PROVIDERS.values()}


_WEB_PORTS = frozenset({80, 443})


def _allowed_entry(entry: str) -> tuple[str, frozenset[int]]:
    """`host`, `host:port`, `[v6]` or `[v6]:port` -> (host, the ports it allows)."""
    host, port = entry.strip().lower(), None
    if host.startswith("["):
        host, _, rest = host[1:].partition("]")
        port = rest.removeprefix(":") if rest else None
    elif host.count(":") == 1:
        host, port = host.split(":")
    if not host or (port is not None and not (port.isdigit() and 0 < int(port) < 65536)):
        raise EndpointRefused(
            f"JUDGE_ALLOWED_HOSTS: {entry!r} is not a host or host:port; an operator must fix it"
        )
    return host, _WEB_PORTS if port is None else frozenset({int(port)})


def _allowed(host: str, port: int | None) -> bool:
    return any(
        host == allowed and port in ports
        for allowed, ports in map(_allowed_entry, settings.JUDGE_ALLOWED_HOSTS)
    )


def allowed_endpoints() -> list[str]:
    """Where a judge may send requests on this server, for the judge form: each provider's
    default address, then every JUDGE_ALLOWED_HOSTS entry (host:port; a bare host means its
    ports 80 and 443)."""
    defaults = sorted({f"{host}:{port}" for _scheme, host, port in _default_origins()})
    return defaults + [entry.strip() for entry in settings.JUDGE_ALLOWED_HOSTS if entry.strip()]


def check_base_url(base_url: str) -> None:
    if not base_url:
        return
    try:
        parts = urlsplit(base_url)
        origin = _origin(base_url)
    except ValueError:
        raise EndpointRefused(f"base_url: {base_url!r} is not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EndpointRefused("base_url: only http:// or https:// URLs with a host")
    if parts.username or parts.password:
        raise EndpointRefused("base_url: no user name or password in the URL")
    _scheme, host, port = origin
    if origin in _default_origins() or _allowed(host, port):
        return
    raise EndpointRefused(
        f"base_url: host {host!r} port {port} is not allowed on this server; an operator can "
        f"add {host}:{port} to JUDGE_ALLOWED_HOSTS (a bare host allows ports 80 and 443 only)"
    )


def check_api_key_env(name: str) -> None:
    if name and name not in settings.JUDGE_API_KEY_ENVS:
        raise EndpointRefused(
            f"api_key_env: {name!r} is not one of the key variables this server allows "
            f"({', '.join(settings.JUDGE_API_KEY_ENVS) or 'none'}); an operator can add it to "
            "JUDGE_API_KEY_ENVS"
        )


def check_endpoint(base_url: str, api_key_env: str) -> None:
    check_base_url(base_url)
    check_api_key_env(api_key_env)
