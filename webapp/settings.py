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
    v = os.getenv(name) or default  # empty (compose passes unset variables so): the default
    try:
        return int(v)
    except ValueError:
        raise ImproperlyConfigured(f"Unexpected value {name}={v}, expected an integer") from None


def envslots(name: str, default: str) -> int | None:
    """A positive number of slots, or None for "auto" (counted from the live workers)."""
    v = (os.getenv(name) or default).strip()
    if v.lower() == "auto":
        return None
    try:
        if int(v) >= 1:
            return int(v)
    except ValueError:
        pass
    raise ImproperlyConfigured(f"Unexpected value {name}={v}, expected a positive integer or auto")


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
    "webapp.quotas",  # per-user limits (runs, disk) and the usage page
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
    "webapp.core.middleware.DiskFullMiddleware",
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

# Uploads go to disk (never memory), counted while streaming; their caps are in the Limits block below.
FILE_UPLOAD_HANDLERS = [
    "webapp.traces.uploads.SizeLimitUploadHandler",
    "webapp.traces.uploads.DiskSafeUploadHandler",
]
# Same filesystem as MEDIA_ROOT, so storing an upload is a rename, not a copy.
FILE_UPLOAD_TEMP_DIR = os.getenv("SCHEDLAB_UPLOAD_TEMP_DIR", str(DATA_DIR / "tmp"))
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)

# Python policy plugins: every *.py of this folder (installed by the admin; never uploaded by visitors,
# docs/policies.md), besides installed packages' entry points (group schedlab.policies). "" = none.
SCHEDLAB_POLICY_DIR = os.getenv("SCHEDLAB_POLICY_DIR", "")

# Background work: two queues (webapp.core.queues), quick work and simulations, served by workers of
# their own; runs reach the simulation queue through the fair dispatcher (webapp.experiments.fairqueue).
REDIS_URL = os.getenv("REDIS_URL", "")
# Simulations computing at once on the whole server (every simulation worker's processes together):
# the dispatcher sends no more. A number, or "auto": the processes of the simulation workers alive
# now, as each reports itself (webapp.core.workers). Default: auto where the workers are started
# apart from the web server (REDIS_URL: compose, scaled or not); under `make run` one per core, and
# its simulation worker gets that many processes. The dispatcher reads it through simulation_slots().
SCHEDLAB_SIM_SLOTS: int | None = envslots("SCHEDLAB_SIM_SLOTS", "auto" if REDIS_URL else
                                          str(max(1, os.cpu_count() or 1)))
# Slots one user may hold while others wait; empty: all but one of the slots (webapp.core.workers
# .slots_per_user), so a newcomer's run starts at once.
SCHEDLAB_SLOTS_PER_USER: int | None = envint("SCHEDLAB_SLOTS_PER_USER", "0") or None
SCHEDLAB_QUICK_CONCURRENCY = envint("SCHEDLAB_QUICK_CONCURRENCY", "1")  # `make run`'s quick worker
SCHEDLAB_WORKER_CONCURRENCY = envint("SCHEDLAB_WORKER_CONCURRENCY", "1")  # a compose simulation worker's processes
# Queue names start with this: tests and benchmarks sharing one Redis keep to their own queues.
SCHEDLAB_QUEUE_PREFIX = os.getenv("SCHEDLAB_QUEUE_PREFIX", "")
# What a worker serves (set by `make run` and compose per worker): quick work is niced less.
SCHEDLAB_WORKER_KIND = os.getenv("SCHEDLAB_WORKER_KIND", "")

# Limits: every quota and cap of the shared server in this one block, each from the environment
# (each user sees them on the usage page; an admin raises one user's in the admin: Quota).
SCHEDLAB_UPLOAD_MAX_BYTES = envint("SCHEDLAB_UPLOAD_MAX_BYTES", str(1024**3))
# What one .gz may inflate to: the largest shared trace (RICC-2010, 448,000 jobs) inflates to 42 MB,
# so 2 GiB is fifty times that; 20 GiB (before) let a 3.9 MB gzip bomb reach 12.5 GB.
SCHEDLAB_UPLOAD_MAX_DECOMPRESSED_BYTES = envint("SCHEDLAB_UPLOAD_MAX_DECOMPRESSED_BYTES", str(2 * 1024**3))
# Leftovers of interrupted uploads (FILE_UPLOAD_TEMP_DIR) older than this are removed at start-up
# and by the periodic check; a request streaming a file keeps writing to it, so its age stays low.
SCHEDLAB_UPLOAD_TEMP_MAX_AGE = envint("SCHEDLAB_UPLOAD_TEMP_MAX_AGE", str(6 * 3600))
SCHEDLAB_MAX_ACTIVE_RUNS = envint("SCHEDLAB_MAX_ACTIVE_RUNS", "500")  # queued or running, per user
SCHEDLAB_MAX_RUNS_PER_EXPERIMENT = envint("SCHEDLAB_MAX_RUNS_PER_EXPERIMENT", "200")  # an experiment, sweep or study
SCHEDLAB_DISK_QUOTA_BYTES = envint("SCHEDLAB_DISK_QUOTA_BYTES", str(10 * 1024**3))  # uploads + caches + results
# Each parse: seconds (then it fails with a message) and memory beyond the worker's own. A preview's
# runs are runs (SCHEDLAB_RUN_TIME_LIMIT).
SCHEDLAB_PARSE_TIME_LIMIT = envint("SCHEDLAB_PARSE_TIME_LIMIT", "600")
SCHEDLAB_TASK_MEMORY_BYTES = envint("SCHEDLAB_TASK_MEMORY_BYTES", str(3 * 1024**3))
SCHEDLAB_RUN_TIME_LIMIT = envint("SCHEDLAB_RUN_TIME_LIMIT", str(6 * 3600))
# Simulating pool processes run this much nicer than the web server (webapp.celery); 0 = the same.
SCHEDLAB_WORKER_NICE = envint("SCHEDLAB_WORKER_NICE", "10")
# A running run whose worker has not written a heartbeat for this long is considered lost.
SCHEDLAB_RUN_STALE_SECONDS = envint("SCHEDLAB_RUN_STALE_SECONDS", "60")
# A site preview's calibration (webapp.preview.calibration): each candidate's figures averaged over this
# many phases of the priority cycle (python -m engine calibrate --phases; 6 as the docs' example)
SCHEDLAB_CALIBRATION_PHASES = envint("SCHEDLAB_CALIBRATION_PHASES", "6")

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
CELERY_TASK_ROUTES = ("webapp.core.queues.route",)
CELERY_TASK_DEFAULT_QUEUE = SCHEDLAB_QUEUE_PREFIX + "quick"
CELERY_TASK_QUEUES = {SCHEDLAB_QUEUE_PREFIX + kind: {"routing_key": SCHEDLAB_QUEUE_PREFIX + kind}
                      for kind in ("quick", "simulation")}
CELERY_TASK_IGNORE_RESULT = not REDIS_URL
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_WORKER_CONCURRENCY = SCHEDLAB_WORKER_CONCURRENCY
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {  # compose's beat service; `make run`'s supervisor calls the same checks itself
    "reconcile-runs": {"task": "webapp.experiments.tasks.reconcile_runs", "schedule": 60.0},
    "reconcile-traces": {"task": "webapp.traces.tasks.reconcile_traces", "schedule": 60.0},
    # runs are dispatched when one ends or is queued; this catches a slot freed by a lost worker
    "dispatch-runs": {"task": "webapp.experiments.tasks.dispatch_runs", "schedule": 10.0},
}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# Every 500 and every failed task is logged with its traceback to the console: the terminal and
# worker.log of `make run` (webapp.run), the containers' logs under compose. Django's own config
# prints django.request only when DEBUG.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "webapp": {"handlers": ["console"], "level": os.getenv("SCHEDLAB_LOG_LEVEL", "INFO")},
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
        "celery": {"handlers": ["console"], "level": "WARNING", "propagate": False},
        # one line per task ("Task ... succeeded in 2.1s"): the worker's log says what it did (and
        # webapp.studies.cluster counts a worker's tasks from it)
        "celery.app.trace": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}
