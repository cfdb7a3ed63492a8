"""Evalsite settings, read from the environment (see `.env.example` for every variable).

A git-ignored `.env` in the checkout fills in what the environment leaves unset: `make run`
writes one with `DEBUG=true`, so every `manage.py` command works afterwards without exporting
anything. A deployment has no `.env`: DEBUG is off unless asked for, and SECRET_KEY is required
whenever it is off.
"""

from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

from evalsite.env import (
    env_bool,
    env_int,
    env_int_list,
    env_list,
    env_path,
    env_str,
    parse_database_url,
    read_env_file,
)

BASE_DIR = Path(__file__).resolve().parent.parent
# The environment wins over the file (override=False), so `DEBUG=false manage.py ...` still works.
read_env_file(BASE_DIR / ".env")
VAR_DIR = env_path("EVALSITE_VAR_DIR", BASE_DIR / "var")

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY in the environment (for example "
            "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`), "
            "or set DEBUG=true for local development."
        )
    # Development only: a per-checkout random key, kept under var/ so sessions survive restarts.
    from evalsite.devkey import development_secret_key

    SECRET_KEY = development_secret_key(VAR_DIR)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "axes",  # login and approval password throttling (after auth)
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "ninja",  # serves the OpenAPI docs page from local static files (no CDN)
    "django_htmx",
    "csp",
    "template_partials",
    "evalsite.worker",  # before django_tasks_db: its db_worker resumes interrupted work first
    "django_tasks",
    "django_tasks_db",
    "evalsite",
    "reviews",
    "judging",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_permissions_policy.PermissionsPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "evalsite.auth.AuthenticationMiddleware",  # Django's; the user read with the session
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout into the 429 page
]

# Single sign-on (OpenID Connect, evalsite/sso.py): off unless OIDC_RP_CLIENT_ID is set; then the
# provider's four endpoints and the client secret are required too. Users are matched by verified
# e-mail; new ones get no project role. SSO-only users approve within SSO_REAUTH_MINUTES of
# signing in at the provider (they have no site password to re-enter).
OIDC_RP_CLIENT_ID = env_str("OIDC_RP_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = env_str("OIDC_RP_CLIENT_SECRET", "")
OIDC_OP_AUTHORIZATION_ENDPOINT = env_str("OIDC_OP_AUTHORIZATION_ENDPOINT", "")
OIDC_OP_TOKEN_ENDPOINT = env_str("OIDC_OP_TOKEN_ENDPOINT", "")
OIDC_OP_USER_ENDPOINT = env_str("OIDC_OP_USER_ENDPOINT", "")
OIDC_OP_JWKS_ENDPOINT = env_str("OIDC_OP_JWKS_ENDPOINT", "")
OIDC_RP_SIGN_ALGO = env_str("OIDC_RP_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = "openid email profile"
OIDC_USE_PKCE = True
OIDC_CREATE_USER = True
OIDC_USERNAME_ALGO = "evalsite.sso.username_for"
SSO_ENABLED = bool(OIDC_RP_CLIENT_ID)
SSO_REAUTH_MINUTES = env_int("SSO_REAUTH_MINUTES", 10, minimum=1)
_sso_missing = [
    name
    for name in (
        "OIDC_RP_CLIENT_SECRET",
        "OIDC_OP_AUTHORIZATION_ENDPOINT",
        "OIDC_OP_TOKEN_ENDPOINT",
        "OIDC_OP_USER_ENDPOINT",
        "OIDC_OP_JWKS_ENDPOINT",
    )
    if not globals()[name]
]
if SSO_ENABLED and _sso_missing:
    raise ImproperlyConfigured(
        f"OIDC_RP_CLIENT_ID is set, so single sign-on is on, but {', '.join(_sso_missing)} "
        "is not set (see the README's *Single sign-on*)."
    )

# Throttling (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one account from one
# client address, that account is locked for LOGIN_LOCKOUT_MINUTES from that address only (a
# guesser elsewhere cannot lock an approver out); after as many from one address, across
# accounts, that address is locked. Login and the approver's password re-entry share the
# counters (reviews/reauth.py). The address is the client's (evalsite/client_address.py): behind
# reverse proxies set TRUSTED_PROXIES to their number, or every user shares the proxy's address.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "evalsite.sso.SsoBackend",  # answers only when single sign-on is configured
    # ModelBackend with the request's user read by hand (evalsite/auth.py says why). A session
    # signed in through django.contrib.auth.backends.ModelBackend (before this) signs in again.
    "evalsite.auth.UserBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]  # the pair; the address
AXES_CLIENT_IP_CALLABLE = "evalsite.client_address.client_address"
TRUSTED_PROXIES = env_int("TRUSTED_PROXIES", 0, minimum=0)
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

ROOT_URLCONF = "evalsite.urls"
WSGI_APPLICATION = "evalsite.wsgi.application"

# <select>s written in Python, as Django's templates write them (evalsite/form_renderer.py).
FORM_RENDERER = "evalsite.form_renderer.FormRenderer"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "evalsite.context_processors.navigation",
                "reviews.context_processors.choices",
                "judging.context_processors.choices",
            ],
        },
    }
]

DATABASES = {
    "default": parse_database_url(
        env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'evalsite.sqlite3'}",
        base_dir=BASE_DIR,
    )
}
# PostgreSQL in production: the tables' owner, for `grant_app_role` (the `owner` alias) and for
# `migrate`, which make serve runs with DATABASE_URL set to it (data migrations of other apps
# use the default alias); the site connects as DATABASE_URL's role, which owns nothing and so
# cannot disable the history triggers (evalsite/db_roles.py, docs/security.md).
MIGRATE_DATABASE_URL = env_str("MIGRATE_DATABASE_URL", "")
if MIGRATE_DATABASE_URL:
    DATABASES["owner"] = parse_database_url(MIGRATE_DATABASE_URL, base_dir=BASE_DIR)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The rater's hot statements are prepared on PostgreSQL (evalsite/backends/postgresql/base.py);
# false for a pooler in transaction mode that does not track them (PgBouncer before 1.21).
DATABASE_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
# A rater's claim and autosave commit without waiting for PostgreSQL's disk flush (see
# reviews/services/assignment/durability.py); true makes them wait like every other write.
RATER_WRITES_WAIT_FOR_DISK = env_bool("RATER_WRITES_WAIT_FOR_DISK", False)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env_path("STATIC_ROOT", VAR_DIR / "static")
STATICFILES_DIRS = [BASE_DIR / "static"]
# Evidence files, uploads and renders: the local MEDIA_ROOT folder, or, past one machine, an
# S3-compatible bucket shared by every web server and worker (django-storages). Credentials
# come from the usual AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY variables or an instance role.
MEDIA_S3_BUCKET = env_str("MEDIA_S3_BUCKET", "")
_MEDIA_STORAGE = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
if MEDIA_S3_BUCKET:
    _MEDIA_STORAGE = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": MEDIA_S3_BUCKET,
            "endpoint_url": env_str("MEDIA_S3_ENDPOINT_URL", "") or None,  # MinIO, Ceph, R2...
            "region_name": env_str("MEDIA_S3_REGION", "") or None,
            "location": env_str("MEDIA_S3_PREFIX", ""),  # a folder inside the bucket
            "file_overwrite": True,  # names are content hashes: same name, same bytes
            "default_acl": None,  # private: files are served through the site's access checks
        },
    }
STORAGES = {
    "default": _MEDIA_STORAGE,
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "evalsite.static_storage.StaticFilesStorage"  # whitenoise's, URLs kept
        )
    },
}
MEDIA_ROOT = env_path("MEDIA_ROOT", VAR_DIR / "media")
MEDIA_URL = "media/"

# A file-based cache: shared by the web server and the task worker (separate processes), e.g.
# for import progress, which cannot go through the database while the import's transaction
# is still open.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": env_path("CACHE_DIR", VAR_DIR / "cache"),
    }
}

# Evidence: uploaded files are checked by content and refused beyond these limits.
EVIDENCE_MAX_BYTES = env_int("EVIDENCE_MAX_BYTES", 50 * 1024 * 1024, minimum=1)
EVIDENCE_MAX_PAGES = env_int("EVIDENCE_MAX_PAGES", 500, minimum=1)
# Decoded pixels allowed per image page (decompression-bomb guard, checked from the header).
EVIDENCE_MAX_PIXELS = env_int("EVIDENCE_MAX_PIXELS", 50_000_000, minimum=1)

# Page images and OCR words are cached in storage under renders/; least recently used go first
# beyond this many bytes (a render is 50-500 KB, so the default holds thousands of pages).
EVIDENCE_CACHE_MAX_BYTES = env_int("EVIDENCE_CACHE_MAX_BYTES", 2 * 1024**3, minimum=1024 * 1024)

# Judges (judging/services/judges/endpoints.py): a project admin may point a judge only at a provider's
# default address or at a host listed here, and may name only these variables as its API key.
JUDGE_ALLOWED_HOSTS = env_list("JUDGE_ALLOWED_HOSTS", [])
JUDGE_API_KEY_ENVS = env_list("JUDGE_API_KEY_ENVS", ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"])

# Webhooks (reviews/services/webhooks/): a project admin may register an endpoint only on a host
# listed here (the judges' rule, evalsite/outbound.py: `host:port`, or a bare host for 80/443).
# https:// only, except a loopback host listed with its port (a receiver on this machine).
WEBHOOK_ALLOWED_HOSTS = env_list("WEBHOOK_ALLOWED_HOSTS", [])
# Seconds before each retry of a failed delivery (then it is given up, and says so).
WEBHOOK_RETRY_SECONDS = env_int_list("WEBHOOK_RETRY_SECONDS", [10, 60, 300, 1800, 7200])
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 10, minimum=1)

# Judge runs: a run whose worker has not reported for this long may be resumed elsewhere.
RUN_STALE_SECONDS = env_int("RUN_STALE_SECONDS", 60, minimum=1)
# How many task workers share each judge run (each takes items as it goes; docs/architecture.md).
RUN_WORKERS = env_int("RUN_WORKERS", 1, minimum=1)

# Minutes between runs of the periodic evidence_gc task (started by `evidence_gc --schedule`).
EVIDENCE_GC_MINUTES = env_int("EVIDENCE_GC_MINUTES", 60, minimum=1)

# Seconds without a worker's heartbeat before a running import counts as dead (Retry offered).
IMPORT_STALE_SECONDS = env_int("IMPORT_STALE_SECONDS", 60, minimum=1)
# Under gunicorn: seconds without a byte of a request body before the server gives up on it (408)
# and frees the thread (evalsite/body_timeout.py); 0 turns it off.
REQUEST_BODY_TIMEOUT = env_int("REQUEST_BODY_TIMEOUT", 15, minimum=0)

# Import limits (reviews/formats/limits.py): each refused with its own message naming it.
IMPORT_MAX_FILE_BYTES = env_int("IMPORT_MAX_FILE_BYTES", 2048 * 1024 * 1024, minimum=1)
IMPORT_MAX_JSON_BYTES = env_int("IMPORT_MAX_JSON_BYTES", 50 * 1024 * 1024, minimum=1)
IMPORT_MAX_DEPTH = env_int("IMPORT_MAX_DEPTH", 64, minimum=2)
IMPORT_MAX_RECORDS = env_int("IMPORT_MAX_RECORDS", 10_000_000, minimum=1)
IMPORT_MAX_STRING_CHARS = env_int("IMPORT_MAX_STRING_CHARS", 1_000_000, minimum=1)
IMPORT_MAX_LINE_BYTES = env_int("IMPORT_MAX_LINE_BYTES", 16 * 1024 * 1024, minimum=1024)
IMPORT_MAX_ZIP_BYTES = env_int("IMPORT_MAX_ZIP_BYTES", 500 * 1024 * 1024, minimum=1)
IMPORT_MAX_ZIP_RATIO = env_int("IMPORT_MAX_ZIP_RATIO", 200, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Approval signatures: the site's Ed25519 key, created under var/ on first use unless given.
SIGNING_KEY_PATH = env_path("SIGNING_KEY_PATH", VAR_DIR / "signing-key.pem")

# Background work (Django Tasks API). The database backend runs in `manage.py db_worker`;
# TASKS_BACKEND=immediate runs tasks inline (tests, scripts).
_TASK_BACKENDS = {
    "database": "django_tasks_db.DatabaseBackend",
    "immediate": "django_tasks.backends.immediate.ImmediateBackend",
}
_task_backend = env_str("TASKS_BACKEND", "database")
if _task_backend not in _TASK_BACKENDS:
    raise ImproperlyConfigured(
        f"TASKS_BACKEND={_task_backend!r} is not one of: {', '.join(_TASK_BACKENDS)}."
    )
TASKS = {"default": {"BACKEND": _TASK_BACKENDS[_task_backend]}}

# Security: strict unless DEBUG; HTTPS redirect can be turned off behind a TLS-terminating proxy.
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SESSION_COOKIE_HTTPONLY = True
# Database sessions read by a hand-written statement (evalsite/sessions.py says why).
SESSION_ENGINE = "evalsite.sessions"
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp): scripts only from our own static files, never inline
# (templates carry no <script> bodies and no on* attributes; htmx runs with eval off). Styles
# allow inline `style` attributes: layout only, and HTML injection is already escaped.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:", "blob:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
# Permissions-Policy (django-permissions-policy): no page needs a device or sensor.
PERMISSIONS_POLICY = {
    feature: []
    for feature in (
        "accelerometer",
        "autoplay",
        "camera",
        "display-capture",
        "geolocation",
        "gyroscope",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "publickey-credentials-get",
        "screen-wake-lock",
        "serial",
        "usb",
        "xr-spatial-tracking",
    )
}
if env_bool("BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # httpx logs every request at INFO: one line per model call would flood a judge run's log.
    "loggers": {"httpx": {"level": "WARNING"}},
}
