"""Included by `evalsite/urls.py` under /api/."""

from reviews.api import api

urlpatterns, _, app_name = api.urls  # app_name doubles as the namespace ninja reverses in
