"""Where a judge may send requests, and which environment variable it may send as its key.

A project admin configures judges, but the server makes the calls: an arbitrary base URL would let
them reach hosts only the server can see (cloud metadata, the database, internal admin pages),
and an arbitrary variable name would send any of the server's secrets (SECRET_KEY, DATABASE_URL)
as a bearer token to a host they choose. So both are limited by operator settings:

- base URL: empty (the provider's default), the origin of a provider's default, or an entry of
  JUDGE_ALLOWED_HOSTS (http/https only, no user:password@ part), read by the shared rule in
  evalsite/outbound.py (webhooks use it too);
- key variable: one of JUDGE_API_KEY_ENVS.

Checked when a judge is saved and again before every run (settings can change in between).
"""

from __future__ import annotations

from django.conf import settings

from evalsite.outbound import (
    HostRefused,
    host_allowed,
    host_refusal,
    listed,
    url_origin,
    url_parts_check,
)
from judging.providers import PROVIDERS

# A base URL or key variable the operator has not allowed; the message names the setting.
EndpointRefused = HostRefused


def _default_origins() -> set[tuple[str, str, int | None]]:
    return {url_origin(cls.default_base_url) for cls in PROVIDERS.values()}


def allowed_endpoints() -> list[str]:
    """Where a judge may send requests on this server, for the judge form: each provider's
    default address, then every JUDGE_ALLOWED_HOSTS entry (host:port; a bare host means its
    ports 80 and 443)."""
    defaults = sorted({f"{host}:{port}" for _scheme, host, port in _default_origins()})
    return defaults + listed(settings.JUDGE_ALLOWED_HOSTS)


def check_base_url(base_url: str) -> None:
    if not base_url:
        return
    origin = url_parts_check(base_url, "base_url")
    _scheme, host, port = origin
    if origin in _default_origins() or host_allowed(
        host, port, settings.JUDGE_ALLOWED_HOSTS, "JUDGE_ALLOWED_HOSTS"
    ):
        return
    raise host_refusal("base_url", host, port, "JUDGE_ALLOWED_HOSTS")


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
