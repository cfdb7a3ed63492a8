"""evalsite/outbound.py: the refusal's hint is an entry the operator can paste as printed."""

import pytest

from evalsite.outbound import host_allowed, host_refusal, url_origin


@pytest.mark.parametrize(
    "url",
    [
        "https://[::1]/hook",
        "http://[fd00::5]:9000/",
        "https://hooks.example.com:8443/",
        "https://a.b/",
    ],
)
def test_the_suggested_entry_allows_the_refused_url(url):
    _, host, port = url_origin(url)
    assert not host_allowed(host, port, [], "WEBHOOK_ALLOWED_HOSTS")
    message = str(host_refusal("url", host, port, "WEBHOOK_ALLOWED_HOSTS"))
    entry = message.split("can add ", 1)[1].split(" to WEBHOOK_ALLOWED_HOSTS", 1)[0]
    assert host_allowed(host, port, [entry], "WEBHOOK_ALLOWED_HOSTS"), entry
