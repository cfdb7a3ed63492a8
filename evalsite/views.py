"""Site-wide views: the login page, the home redirect, the favicon and a health check for load balancers."""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import HttpResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.views.decorators.http import require_safe

from reviews.selectors import has_queue_role


class LoginView(auth_views.LoginView):
    """Django's login page, offering single sign-on too when it is configured."""

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "sso_enabled": settings.SSO_ENABLED}


@require_safe
def home(request):
    """Where a login lands: My queue for whoever rates, adjudicates or approves somewhere (it
    counts what waits for them), else the project list (admins, staff, newcomers)."""
    return redirect("my_queue" if has_queue_role(request.user) else "project_list")


@require_safe
@login_not_required
def favicon(request):
    """Browsers ask for /favicon.ico on pages that link no icon (the admin, the API docs)."""
    return redirect(static("favicon.svg"), permanent=True)


@require_safe
@login_not_required
def healthz(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return HttpResponse("ok", content_type="text/plain")
