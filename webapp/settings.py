"""Django settings for SchedLab, read from environment variables.

Every knob has an embedded default so that `make run` works on a laptop with no services:
SQLite and a filesystem Celery broker inside the data directory. A lab server sets
DATABASE_URL (PostgreSQL) and REDIS_URL (broker and results), see docs/web.md.
"""

from __future__ import annotations

import os
import tempfile
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: str) -> bool:
    v = os.getenv(name, default)
    if v not in ("", "True", "False", "true", "false", "1", "0"):
        raise ImproperlyConfigured(f"Unexpected value {name}={v}, use 'True' or 'False'")
    return v in ("True", "true", "1")


def envint(name: str, default: str) -> int:
    v = os.getenv(name, default)
    try:
        return int(v)
    except ValueError:
        raise ImproperlyConfigured(f"Unexpected value {name}={v}, expected an integer") from None


def envlist(name: str, default: str) -> list[str]:
    return [part.strip() for part in os.getenv(name, default).split(",") if part.strip()]


DATA_DIR = Path(os.getenv("SCHEDLAB_DATA_DIR", str(BASE_DIR / "var"))).resolve()


def _dev_secret_key() -> str:
    """A random key generated once and kept in the data directory (never the same on two installs).
    Created atomically: web and workers sharing the directory all read the same key."""
    path = DATA_DIR / "secret_key"
    if not path.exists():
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        tmp = DATA_DIR / f".secret_key.{os.getpid()}"
        tmp.write_text(secrets.token_urlsafe(50))
        tmp.chmod(0o600)
        try:
            os.link(tmp, path)  # fails if another process won the race: use theirs
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    return path.read_text().strip()


SECRET_KEY = os.getenv("SECRET_KEY") or _dev_secret_key()
DEBUG = envbool("DEBUG", "False")
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",  # keep this literal: pytest-django's live_server serves finders only then
    "webapp.core",
    "webapp.accounts",  # login throttling, the API tokens page
    "webapp.traces",
    "webapp.experiments",
    "webapp.api",
    "webapp.dashboards",  # the comparison and trace characterization pages (Bokeh)
    "webapp.allocations",  # allocations files (SFS targets) and the §9 scenario generator
    "webapp.studies",  # parameter grids (load, MASC, policies) fanned out over every worker
    "webapp.preview",  # machine descriptions, queue configurations, the queue-reconfiguration preview
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "webapp.core.middleware.ContentSecurityPolicyMiddleware",
    "webapp.core.middleware.LoginRequiredMiddleware",
]

ROOT_URLCONF = "webapp.urls"
WSGI_APPLICATION = "webapp.wsgi.application"

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
                "webapp.core.context_processors.schedlab",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{DATA_DIR / 'schedlab.sqlite3'}", conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Connections stay open (conn_max_age above), as on PostgreSQL: opening the file with its PRAGMAs
    # costs ~1.3 ms CPU, a fifth of a small page's (benchmarks/page_cost.py).
    # Web server and worker write to one file: wait for the lock instead of failing at once.
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    })
    # Tests get a file, not SQLite's in-memory database: there, the worker, live-server and test
    # threads hit "database table is locked" at once instead of waiting for the lock.
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"schedlab-test-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "traces:list"
LOGOUT_REDIRECT_URL = "login"

# Accounts on a shared server: throttled password attempts and token requests, expiring tokens.
SCHEDLAB_AUTH_ATTEMPTS = envint("SCHEDLAB_AUTH_ATTEMPTS", "10")  # a minute, per account and per address
SCHEDLAB_AUTH_LOCKOUT_SECONDS = envint("SCHEDLAB_AUTH_LOCKOUT_SECONDS", "60")  # the wait after that
SCHEDLAB_PROXIES = envint("SCHEDLAB_PROXIES", "0")  # reverse proxies in front (their X-Forwarded-For entry is the address)
SCHEDLAB_TOKEN_MAX_AGE = envint("SCHEDLAB_TOKEN_MAX_AGE", str(30 * 24 * 3600))

# Security headers. Django's defaults already send nosniff, Referrer-Policy: same-origin and
# X-Frame-Options: DENY; they are spelled out here because they are meant, not inherited.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True  # no script of ours reads it: forms carry the token
# As strict as BokehJS allows: no inline script anywhere (pages load only our static files), but
# BokehJS compiles CustomJS callbacks, tick formatters and table cell templates with `new Function`
# ('unsafe-eval') and styles its shadow DOM with <style> elements and style attributes ('unsafe-inline'
# for styles only). Plot data comes as JSON from our own views (connect-src 'self').
CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'", "script-src 'self' 'unsafe-eval'", "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:", "font-src 'self' data:", "connect-src 'self'", "worker-src 'self' blob:",
    "object-src 'none'", "base-uri 'self'", "form-action 'self'", "frame-ancestors 'none'",
])
# Behind a TLS-terminating proxy (which must set X-Forwarded-Proto): secure cookies, HTTPS only, HSTS.
SCHEDLAB_BEHIND_TLS = envbool("SCHEDLAB_BEHIND_TLS", "False")
if SCHEDLAB_BEHIND_TLS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = envint("SCHEDLAB_HSTS_SECONDS", str(365 * 24 * 3600))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    # Preloading is a promise to browser vendors that the whole domain stays HTTPS: the admin opts in.
    SECURE_HSTS_PRELOAD = envbool("SCHEDLAB_HSTS_PRELOAD", "False")
    SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
# Set where collectstatic runs (the docker image); otherwise files are served from the finders.
STATIC_ROOT = os.getenv("STATIC_ROOT") or None
STATICFILES_DIRS = [BASE_DIR / "static"]
# BokehJS: the wheel's minified bundles with gzip twins, as static/bokeh/js/ (webapp/dashboards/bokehjs.py).
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "webapp.dashboards.bokehjs.BokehJSFinder",
]
# collectstatic writes a .gz next to every file; whitenoise sends it to browsers that accept gzip.
# Not the Manifest variant: its hashed names buy little here and it needs care with the bokeh wheel.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve straight from the finders unless a deployment ran collectstatic (docker image does).
WHITENOISE_USE_FINDERS = envbool("SCHEDLAB_STATIC_FROM_FINDERS", "True")
WHITENOISE_AUTOREFRESH = DEBUG

MEDIA_ROOT = Path(os.getenv("MEDIA_ROOT", str(DATA_DIR / "media")))

# Uploads: always to disk (never in memory), counted while streaming, capped.
SCHEDLAB_UPLOAD_MAX_BYTES = envint("SCHEDLAB_UPLOAD_MAX_BYTES", str(1024**3))
SCHEDLAB_UPLOAD_MAX_DECOMPRESSED_BYTES = envint(
    "SCHEDLAB_UPLOAD_MAX_DECOMPRESSED_BYTES", str(20 * 1024**3)
)
FILE_UPLOAD_HANDLERS = [
    "webapp.traces.uploads.SizeLimitUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
# Same filesystem as MEDIA_ROOT, so storing an upload is a rename, not a copy.
FILE_UPLOAD_TEMP_DIR = os.getenv("SCHEDLAB_UPLOAD_TEMP_DIR", str(DATA_DIR / "tmp"))
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)

# Background work
REDIS_URL = os.getenv("REDIS_URL", "")
SCHEDLAB_WORKER_CONCURRENCY = envint("SCHEDLAB_WORKER_CONCURRENCY", "1")
SCHEDLAB_RUN_TIME_LIMIT = envint("SCHEDLAB_RUN_TIME_LIMIT", str(6 * 3600))
# Simulating pool processes run this much nicer than the web server (webapp.celery); 0 = the same.
SCHEDLAB_WORKER_NICE = envint("SCHEDLAB_WORKER_NICE", "10")
# A running run whose worker has not written a heartbeat for this long is considered lost.
SCHEDLAB_RUN_STALE_SECONDS = envint("SCHEDLAB_RUN_STALE_SECONDS", "60")

if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    # Above the longest run, or Redis redelivers an unacknowledged long run while it still runs.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": SCHEDLAB_RUN_TIME_LIMIT + 3600}
else:
    BROKER_DIR = DATA_DIR / "broker"
    for _folder in ("queue", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"),
        "polling_interval": 0.25,  # seconds between looks at the queue folder
    }
    CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = not REDIS_URL
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_WORKER_CONCURRENCY = SCHEDLAB_WORKER_CONCURRENCY
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {  # compose's beat service; `make run`'s supervisor calls the same checks itself
    "reconcile-runs": {"task": "webapp.experiments.tasks.reconcile_runs", "schedule": 60.0},
}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "webapp": {"handlers": ["console"], "level": os.getenv("SCHEDLAB_LOG_LEVEL", "INFO")},
    },
}
