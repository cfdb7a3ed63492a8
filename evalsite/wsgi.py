import gc
import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from evalsite.body_timeout import with_body_timeout

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
application = with_body_timeout(get_wsgi_application(), settings.REQUEST_BODY_TIMEOUT)

# Everything loaded so far (Django, the apps, the URLconf and the views it imports) lives as
# long as the process. Frozen, Python's cyclic collector stops walking those ~200,000 objects
# on each of its full passes: they cost a request 0.33 ms on average (more in the requests
# they land on), 0.13 ms frozen (bench/README.md, issue #33).
get_resolver().url_patterns  # noqa: B018 (imports every view module now, not on a first request)
gc.freeze()
