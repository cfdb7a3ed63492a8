"""The client's address, for the password throttle (django-axes: `AXES_CLIENT_IP_CALLABLE`).

Directly on the internet it is REMOTE_ADDR. Behind TRUSTED_PROXIES reverse proxies, REMOTE_ADDR
is the last proxy and every user would share it (one guesser would lock everyone out): each
proxy appends the address it received the request from to X-Forwarded-For, so the client is
the entry TRUSTED_PROXIES from the right. Entries further left were written by the client and
prove nothing; a request with fewer entries did not come through every proxy and is taken at
its REMOTE_ADDR.
"""

from ipaddress import ip_address

from django.conf import settings


def client_address(request) -> str:
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = settings.TRUSTED_PROXIES
    if not proxies:
        return remote
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    if len(hops) < proxies:
        return remote
    try:
        return str(ip_address(hops[-proxies]))
    except ValueError:  # not an address: a proxy that forwards junk is no proxy we trust
        return remote
