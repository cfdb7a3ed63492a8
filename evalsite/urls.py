from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from evalsite import sso, views
from evalsite.admin_scope import view_on_site

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", views.LoginView.as_view(), name="login"),
    # Single sign-on (evalsite/sso.py): 404 unless configured.
    path("accounts/sso/login/", sso.sso_login, name="oidc_authentication_init"),
    path("accounts/sso/callback/", sso.sso_callback, name="oidc_authentication_callback"),
    path("accounts/sso/again/", sso.sso_reauth, name="sso_reauth"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password/",
        auth_views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "accounts/password/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    # Before the admin's own (the same route): its "view on site", narrowed to rows one may see.
    path("admin/r/<int:content_type_id>/<path:object_id>/", admin.site.admin_view(view_on_site)),
    path("admin/", admin.site.urls),
    path("api/", include("evalsite.api_urls")),
    path("", include("reviews.urls")),
    path("", include("judging.urls")),
]
