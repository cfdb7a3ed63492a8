"""The API's URLs, included under /api/ by `evalsite/urls.py`: reviews' API with judging's
routers added here, above both apps (reviews never imports judging)."""

from judging.api import router as scores_router
from reviews.api import api

api.add_router("/projects", scores_router)

urlpatterns, _, app_name = api.urls  # app_name doubles as the namespace ninja reverses in
