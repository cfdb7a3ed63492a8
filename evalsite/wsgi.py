import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from evalsite.body_timeout import with_body_timeout

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
application = with_body_timeout(get_wsgi_application(), settings.REQUEST_BODY_TIMEOUT)
