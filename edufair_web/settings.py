"""Settings, read from the environment (every variable is documented in README.md).

With nothing set, EduFair Web runs embedded: SQLite (WAL, IMMEDIATE transactions) and Celery on
kombu's SQLAlchemy transport over another SQLite file. `DATABASE_URL` and `CELERY_BROKER_URL`
switch to PostgreSQL and Redis for production and for scaling out with more workers.
"""

import hashlib
import os
import re
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY (a long random string), or DEBUG=1 for local use."
        )
    SECRET_KEY = "insecure-development-key-only-used-when-DEBUG-is-on"

# Salt of the annotator pseudonyms in Label Studio exports (stable per person across a deployment's projects).
ANNOTATOR_PSEUDONYM_SALT = (
    os.environ.get("EDUFAIR_PSEUDONYM_SALT")
    or hashlib.sha256(b"annotator-pseudonyms:" + SECRET_KEY.encode()).hexdigest()
)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

# Where the embedded default keeps its SQLite files (database and broker).
DATA_DIR = Path(os.environ.get("EDUFAIR_DATA_DIR", BASE_DIR / "var"))
DATA_DIR.mkdir(parents=True, exist_ok=True)

INSTALLED_APPS = [
    "edufair_web.accounts.apps.EduFairAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "edufair_web.accounts",
    "audits",
    "annotation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # A NUL in the path or a query parameter is a 400 here, not a database error in whichever view reads it.
    "edufair_web.request_text.RefuseUnstorableTextMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # A crowd recruit's page views keep their place (a released one is taken back while a place is free).
    "annotation.crowd_presence_middleware.CrowdPresenceMiddleware",
    # A crowd recruit who has finished is sent to their completion code from any page.
    "annotation.crowd_middleware.CrowdFinishMiddleware",
    # The pages of an expensive read count in its API's throttle (edufair_web.accounts.throttles).
    "edufair_web.accounts.expensive_read_pages.ExpensiveReadPageThrottleMiddleware",
    # Each page view may spend so much CPU time on Markdown (comments, guidelines); later texts are plain paragraphs.
    "annotation.markdown_page_budget.MarkdownPageBudgetMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "edufair_web.urls"
WSGI_APPLICATION = "edufair_web.wsgi.application"

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
                "edufair_web.accounts.context_processors.roles",
                # A crowd recruit's "I do not consent / leave" button.
                "annotation.crowd_context.crowd_leave",
            ],
            # How every page writes a rate, a count, a cost and a time (`edufair_web.display`).
            "builtins": ["edufair_web.display_tags"],
        },
    },
]

# --- Database -----------------------------------------------------------------------------------

SQLITE_PATH = DATA_DIR / "edufair.sqlite3"
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{SQLITE_PATH}",
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web process and the worker share one file: WAL lets readers and a writer work at once,
    # IMMEDIATE makes writers queue for the lock instead of failing with "database is locked".
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": int(os.environ.get("SQLITE_BUSY_TIMEOUT", "30")),
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # A file, not memory: a Celery worker started by a test must open the same test database.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test-edufair.sqlite3")}
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool(
    "DATABASE_PREPARED_STATEMENTS", True
):
    # The server binds the parameters, and a statement run 5 times on a connection is prepared: the labelling
    # hot path then skips PostgreSQL's planning (its CPU per request fell 3.1 → 1.7 ms, benchmarks/RESULTS.md). Off
    # behind a pooler in transaction mode that cannot keep prepared statements (PgBouncer before 1.21).
    DATABASES["default"].setdefault("OPTIONS", {}).update({"server_side_binding": True, "prepare_threshold": 5})
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool("DATABASE_TRANSACTION_POOLING"):
    # Behind PgBouncer in transaction mode (docker-compose.yml's `pgbouncer` profile) a server-side cursor (an export's
    # `.iterator()`) would outlive the transaction that holds its server connection: read through client-side ones.
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth ---------------------------------------------------------------------------------------

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
# An invitation link (a password-reset token) works once, for this long.
PASSWORD_RESET_TIMEOUT = int(float(os.environ.get("INVITE_LINK_HOURS", "72")) * 3600)
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Five failures in a row for one username from one address lock it out; the sixth try is refused.
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = float(os.environ.get("AXES_COOLOFF_HOURS", "1"))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Reverse proxies in front of the app (each appends to X-Forwarded-For); 0: the socket's address is the client's.
# Lockouts and throttles both key on edufair_web.accounts.client_address (django-ipware). AXES_PROXY_COUNT is the
# variable's former name.
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT") or os.environ.get("AXES_PROXY_COUNT") or "0")
AXES_CLIENT_IP_CALLABLE = "edufair_web.accounts.client_address.client_address"

# API tokens (django-rest-knox): stored as SHA-512 digests, valid for this long, deleted when the password changes.
API_TOKEN_TTL_HOURS = float(os.environ.get("API_TOKEN_TTL_HOURS", "10"))
if API_TOKEN_TTL_HOURS <= 0:
    raise ImproperlyConfigured("API_TOKEN_TTL_HOURS must be a positive number of hours (tokens always expire).")
REST_KNOX = {"TOKEN_TTL": timedelta(hours=API_TOKEN_TTL_HOURS), "AUTO_REFRESH": False}


# Throttles (edufair_web.accounts.throttles), as DRF spells rates ("30/minute"); "off" switches one off.
def throttle_rate(name: str, default: str) -> str | None:
    rate = os.environ.get(name, default).strip()
    if rate.lower() in {"", "off", "none"}:
        return None
    if not re.fullmatch(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)", rate):
        raise ImproperlyConfigured(f"{name}={rate!r}: a rate is N/second, N/minute, N/hour or N/day, or off.")
    return rate


THROTTLE_RATES = {
    "login": throttle_rate("THROTTLE_LOGIN_RATE", "30/minute"),
    "write": throttle_rate("THROTTLE_WRITE_RATE", "600/minute"),
    "expensive_read": throttle_rate("THROTTLE_EXPENSIVE_READ_RATE", "120/minute"),
    # Crowd arrivals are counted in the database (annotation.services.crowd_entry), shared by every process.
    "crowd_entry": throttle_rate("THROTTLE_CROWD_ENTRY_RATE", "30/minute"),
    "crowd_link": throttle_rate("THROTTLE_CROWD_LINK_RATE", "120/minute"),
}

# --- Cache --------------------------------------------------------------------------------------

# Throttle counts and computed results (judge-corrected tables, aggregation fits), shared by every web process:
# `CACHE_URL` (redis://…, a database of its own: clearing the cache empties it) when set; else the broker's Redis, one
# database number up (Celery keeps its own); else a table in the database (created by accounts' migration 0005).
CACHE_URL = os.environ.get("CACHE_URL", "")
CACHE_TABLE = "edufair_cache"


def shared_cache(cache_url: str, broker_url: str) -> dict:
    """The default cache: Redis at `cache_url`, or at the Redis broker's next database, or the database table."""
    if not cache_url and broker_url.startswith(("redis://", "rediss://")):
        broker = urlsplit(broker_url)
        database = int(broker.path.strip("/") or 0)
        cache_url = urlunsplit(broker._replace(path=f"/{(database + 1) % 16}"))
    if cache_url:
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": cache_url,
            "KEY_PREFIX": "edufair",
        }
    # Throttle counts expire within their window; past this many rows the expired go first, then a third by key.
    return {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": CACHE_TABLE,
        "OPTIONS": {"MAX_ENTRIES": 10_000},
    }


CACHES = {
    "default": shared_cache(CACHE_URL, os.environ.get("CELERY_BROKER_URL", "")),
    # The built API schema (edufair_web.accounts.schema): per process, so always the running code's.
    # The results page's parts and the HTML report rendered from an analysis (audits.views.results,
    # audits.services.results_report): per process, so always the running code's; compressed, a few MB at most.
    "results_pages": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "edufair-results-pages",
        "TIMEOUT": 3600,
        "OPTIONS": {"MAX_ENTRIES": 32},
    },
    "schema": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "edufair-schema",
        "TIMEOUT": None,
        "OPTIONS": {"MAX_ENTRIES": 16},
    },
}

# --- Static files -------------------------------------------------------------------------------

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# In development whitenoise serves straight from the app and static folders (no collectstatic).
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", DATA_DIR / "media"))
MEDIA_URL = "media/"
# Question and label imports can be large; uploads above this size go to a temporary file.
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("DATA_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024 * 1024))

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- Security (production) ----------------------------------------------------------------------

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BEHIND_TLS_PROXY") else None
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "0" if DEBUG else "31536000"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Scripts only from this site (every page's JS is a vendored or static file; no inline scripts).
# Inline style attributes stay allowed: progress bars and htmx's indicator styles use them.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
        "base-uri": ["'self'"],
        "object-src": ["'none'"],
    }
}
# /healthz answers plain HTTP probes from the container runtime and load balancers.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

# --- REST API -----------------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous API call then gets 401 with a WWW-Authenticate header.
        "edufair_web.accounts.authentication.RoleTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # DRF's JSON parser, with the body size and nesting depth bounded (a deep body was a RecursionError, a 500).
    "DEFAULT_PARSER_CLASSES": [
        "edufair_web.json_parser.DepthBoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "edufair_web.accounts.throttles.UserWriteRateThrottle",
        "edufair_web.accounts.throttles.ExpensiveReadRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": THROTTLE_RATES,
    # For DRF's own throttles, should one be used: the same proxies as edufair_web.accounts.client_address.
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "EduFair Web API",
    "DESCRIPTION": "Fairness audits of LLM tutors and the human annotation that validates their judge.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The <id:…> path converter (edufair_web.converters): an id of at most 18 digits.
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 0, "maximum": 10**18 - 1}},
    # The schema and its documentation are for researchers (they map every endpoint).
    "SERVE_PERMISSIONS": ["edufair_web.accounts.permissions.IsResearcher"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several models have a field called `status`; give each choice set its own schema name.
    "ENUM_NAME_OVERRIDES": {
        "AnalysisStatusEnum": "audits.models.analysis.AnalysisResult.Status",
        "AuditOutcomeEnum": "audits.api.serializers_runs.OUTCOMES",
        "AuditStatusEnum": "audits.models.runs.Audit.Status",
        "DialogueStatusEnum": "audits.models.runs.Dialogue.Status",
        "JudgeStatusEnum": "audits.models.runs.TurnScore.Status",
        "JudgeValidationStatusEnum": "annotation.models.validation.JudgeValidation.Status",
        "LLMCallStatusEnum": "audits.models.llm.LLMCall.Status",
        "QuestionImportStatusEnum": "audits.models.questionbank.QuestionImport.Status",
        "RubricMetricEnum": "annotation.judge_validation.rubric.METRIC_CHOICES",
    },
}

# --- Celery -------------------------------------------------------------------------------------

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or f"sqla+sqlite:///{DATA_DIR / 'celery-broker.sqlite3'}"
# One number for Redis's redelivery of unacknowledged messages: longer than the longest task,
# or a slow batch would be handed to a second worker while the first still runs it.
CELERY_VISIBILITY_TIMEOUT = int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600"))
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT}
if CELERY_BROKER_URL.startswith("sqla+"):
    # kombu's SQLAlchemy transport hands its options to SQLAlchemy's create_engine and has no
    # redelivery timeout of its own; it polls its table once a second.
    CELERY_BROKER_TRANSPORT_OPTIONS = {}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Progress and results live in the database; no result backend is needed.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "edufair")
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TIMEZONE = TIME_ZONE

# --- Audits -------------------------------------------------------------------------------------

# Audit batches and background imports go to this queue (default: the Celery default queue), so
# a deployment can dedicate workers to audits with `celery worker -Q <queue>`.
AUDITS_TASK_QUEUE = os.environ.get("AUDITS_TASK_QUEUE") or CELERY_TASK_DEFAULT_QUEUE
# A worker's claim on a dialogue lasts this long without renewal; a dead worker's dialogues are
# taken up again after it.
AUDIT_CLAIM_LEASE_SECONDS = int(os.environ.get("AUDIT_CLAIM_LEASE_SECONDS", "60"))
# The one retry layer for model calls (audits/llm/client.py RetryPolicy).
AUDIT_RETRY_POLICY = {
    "max_attempts": int(os.environ.get("LLM_MAX_ATTEMPTS", "5")),
    "backoff_base": float(os.environ.get("LLM_BACKOFF_BASE_SECONDS", "0.5")),
    "backoff_cap": float(os.environ.get("LLM_BACKOFF_CAP_SECONDS", "30")),
    "max_retry_after": float(os.environ.get("LLM_MAX_RETRY_AFTER_SECONDS", "120")),
}
# What a model endpoint may send and where (audits/llm/outbound_policy.py): its key variable must start with
# one of these prefixes (comma-separated; empty: none) or be a provider's usual name or one listed here; its
# host must resolve to public addresses, or be allowed here (host names, ".domain" for its subdomains, IP
# addresses, networks), or private (loopback, RFC 1918, unique-local) when EDUFAIR_ENDPOINT_ALLOW_PRIVATE is on.
EDUFAIR_LLM_KEY_ENV_PREFIX = os.environ.get("EDUFAIR_LLM_KEY_ENV_PREFIX", "EDUFAIR_KEY_")
EDUFAIR_LLM_KEY_ENV_NAMES = env_list("EDUFAIR_LLM_KEY_ENV_NAMES")
# And the key goes only to the hosts its variable is bound to: the providers' own by default, others as
# NAME=host|host (".domain" for its subdomains, * for any host), comma-separated.
EDUFAIR_LLM_KEY_HOSTS = env_list("EDUFAIR_LLM_KEY_HOSTS")
EDUFAIR_ENDPOINT_ALLOWED_HOSTS = env_list("EDUFAIR_ENDPOINT_ALLOWED_HOSTS")
EDUFAIR_ENDPOINT_ALLOW_PRIVATE = env_bool("EDUFAIR_ENDPOINT_ALLOW_PRIVATE", False)
# Endpoints' requests/tokens-per-minute budgets are shared by all worker processes through Redis when
# the broker is Redis (or this URL names one), through the database otherwise (audits.services.rate_limits).
AUDIT_RATE_LIMIT_REDIS_URL = os.environ.get("AUDIT_RATE_LIMIT_REDIS_URL") or (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else ""
)
# Judging runs on workers (re-judging, judge validation): the claim's lease, and how often a batch at the
# provider is polled (the Batch API answers within 24 h; a local test server within a second).
JUDGE_RUN_LEASE_SECONDS = int(os.environ.get("JUDGE_RUN_LEASE_SECONDS", "60"))
JUDGE_BATCH_POLL_SECONDS = float(os.environ.get("JUDGE_BATCH_POLL_SECONDS", "30"))
# Fairness analyses (results pages, API, exports) are computed by a worker on this queue (default: the
# audits' queue). A queued or running analysis whose worker has not written progress for this long (it
# died, or the broker lost the message) is queued again by the next request for it.
ANALYSIS_TASK_QUEUE = os.environ.get("ANALYSIS_TASK_QUEUE") or AUDITS_TASK_QUEUE
ANALYSIS_LEASE_SECONDS = int(os.environ.get("ANALYSIS_LEASE_SECONDS", "120"))
# An audit's default analysis is queued when the audit finishes and when re-judging changes its scores, so it is
# ready before anyone opens it (0: computed when first asked for).
ANALYSIS_ON_FINISH = env_bool("ANALYSIS_ON_FINISH", True)
# Processes one analysis forks for its statistics (results never depend on it; 1 = in the worker itself).
ANALYSIS_PROCESSES = max(1, int(os.environ.get("ANALYSIS_PROCESSES", "1")))
# Question files up to this size import inside the request; larger ones run on a worker.
QUESTION_IMPORT_INLINE_MAX_BYTES = int(os.environ.get("QUESTION_IMPORT_INLINE_MAX_BYTES", 2 * 1024 * 1024))
# Bounded input: the largest file accepted per kind of upload, refused before it is read (the error states the
# limit). Item files are parsed in memory; question files are streamed from disk.
UPLOAD_MAX_BYTES = {
    "items": int(os.environ.get("ITEM_IMPORT_MAX_BYTES", 10 * 1024 * 1024)),
    "questions": int(os.environ.get("QUESTION_IMPORT_MAX_BYTES", 512 * 1024 * 1024)),
}
# The largest record (a line, a CSV row's line, an element of a JSON list) of any imported file, refused as it is
# read, before it is held whole (edufair_web.record_bounds); real records are a few KB.
IMPORT_RECORD_MAX_BYTES = int(os.environ.get("IMPORT_RECORD_MAX_BYTES", 1024 * 1024))

# A worker is shown as alive on /healthz when it wrote its heartbeat this recently.
WORKER_HEARTBEAT_SECONDS = int(os.environ.get("WORKER_HEARTBEAT_SECONDS", "10"))
WORKER_ALIVE_SECONDS = int(os.environ.get("WORKER_ALIVE_SECONDS", "60"))
# A worker silent longer than this is gone (stopped, or restarted under another name): /system/ no longer lists it.
WORKER_GONE_SECONDS = int(os.environ.get("WORKER_GONE_SECONDS", "3600"))
# Anonymous /healthz answers from a probe at most this old (per process); signed-in staff get a live one.
HEALTHZ_STATUS_SECONDS = float(os.environ.get("HEALTHZ_STATUS_SECONDS", "5"))

# --- Logging ------------------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {"one_line_refusals": {"()": "edufair_web.log_filters.OneLineRefusals"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["one_line_refusals"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
