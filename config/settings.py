"""Settings, driven by the environment.

With no DATABASE_URL and no REDIS_URL the site runs embedded: SQLite, a Celery broker on the
filesystem under var/, a file cache, and mail written to var/mail/. Production differs by values
(DJANGO_ENV=production), not by code paths.
"""

from __future__ import annotations

import django_stubs_ext
from django.utils.csp import CSP

from config.environment import BASE_DIR, REDIS_URL, VAR_DIR, env
from core.secret_key import development_secret_key

# Lets generic classes such as ModelAdmin[Model] and ModelForm[Model] be subscripted at run time.
django_stubs_ext.monkeypatch()


ENVIRONMENT = env.str("DJANGO_ENV", default="development")
IS_PRODUCTION = ENVIRONMENT == "production"

# Only when asked for: DEBUG's error page lists the environment (database and mail passwords).
DEBUG = env.bool("DJANGO_DEBUG", default=False)
# Production has no default: a missing SECRET_KEY must stop the process. Elsewhere a key is
# generated once into var/, so a key in the code can never forge a development site's links.
SECRET_KEY = (
    env.str("SECRET_KEY")
    if IS_PRODUCTION
    else env.str("SECRET_KEY", default="") or development_secret_key(var_dir=VAR_DIR)
)
ALLOWED_HOSTS = env.list(
    "ALLOWED_HOSTS",
    default=[] if IS_PRODUCTION else ["localhost", "127.0.0.1", "[::1]", "testserver"],
)
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# The site's public origin, used in emails (links, List-Unsubscribe) sent outside a request.
SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    # Django
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    # Third party
    "allauth",
    "allauth.account",
    "django_htmx",
    # Local
    "accounts",
    "courses",
    "quizzes",
    "planner",
    "reminders",
    "home",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.middleware.learner_time_zone",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.roles",
                "home.navigation.current_section",
            ],
        },
    },
]

# Database: SQLite embedded, PostgreSQL through DATABASE_URL (psycopg 3).
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web process, the worker and beat share one file: wait for locks, take them up front.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # The review pages' statements are prepared (quizzes/selectors/prepared.py) with every
    # constant bound as a parameter, so PostgreSQL priced their generic plans above custom ones
    # and planned the queue's counts afresh on each request: 0.9 ms of planning for 1 ms of
    # work. Their generic plans take the same index paths. Statements Django sends itself are
    # not prepared, so this setting leaves them as they were.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "options", "-c plan_cache_mode=force_generic_plan"
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


if REDIS_URL:
    # While Redis is down each process caches in its own memory (config/cache.py): log in, the
    # rate limiter and the retention page keep working. Short timeouts: a page never hangs on it.
    CACHES = {
        "default": {
            "BACKEND": "config.cache.DegradingRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 1.0},
        }
    }
else:
    # A file cache is shared by the embedded processes, so login rate limits hold across them.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

# Database sessions whose failed save (a database gone mid-request) is the server-error page,
# not Django's 400 "session was deleted".
SESSION_ENGINE = "accounts.session_store"

AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "home"

# django-allauth: email is the login; verification is mandatory; failed logins are rate-limited.
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_CONFIRM_EMAIL_ON_GET = False
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_LOGOUT_ON_GET = False
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_RATE_LIMITS = {
    "login_failed": env.str("LOGIN_FAILED_RATE_LIMIT", default="10/m/ip,5/5m/key"),
    "signup": "20/m/ip",
    "reset_password": "20/m/ip,5/m/key",
}
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[Recall] "

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=VAR_DIR / "static")
STATICFILES_DIRS = [BASE_DIR / "static"]
# DEBUG is off by default, so the development server's static files come from whitenoise.
WHITENOISE_USE_FINDERS = not IS_PRODUCTION
# Production: collectstatic writes hashed, compressed copies that whitenoise serves from the web
# process with far-future cache headers (make serve runs it; the web server only reads them).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if IS_PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Email through Django 6.1's MAILERS: SMTP (or a provider) from EMAIL_URL, e.g.
# smtp+tls://user:pass@smtp.example.com:587; embedded, mail lands as files in var/mail/.
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Recall <recall@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# Production must name a real mail server: there is no default.
if IS_PRODUCTION or env.str("EMAIL_URL", default=""):
    _email = env.email_url("EMAIL_URL")
    _backend = _email["EMAIL_BACKEND"]
    MAILERS = {
        "default": {
            # SMTP through Django's backend, whose connection says whether a message's data went
            # out (an answer lost after it means "possibly delivered": config/mail.py).
            "BACKEND": "config.mail.EmailBackend"
            if _backend == "django.core.mail.backends.smtp.EmailBackend"
            else _backend,
            "OPTIONS": {
                "host": _email.get("EMAIL_HOST"),
                "port": _email.get("EMAIL_PORT"),
                "username": _email.get("EMAIL_HOST_USER") or None,
                "password": _email.get("EMAIL_HOST_PASSWORD") or None,
                "use_tls": bool(_email.get("EMAIL_USE_TLS")),
                "use_ssl": bool(_email.get("EMAIL_USE_SSL")),
                "timeout": env.int("EMAIL_TIMEOUT", default=20),
            },
        }
    }
else:
    MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.filebased.EmailBackend",
            "OPTIONS": {"file_path": str(VAR_DIR / "mail")},
        }
    }

# Promised email (digests, grade emails): a temporary failure (4xx, timeout, refused) is tried
# again after OUTBOX_RETRY_BASE_SECONDS, doubling up to OUTBOX_RETRY_MAX_SECONDS, with jitter,
# for OUTBOX_RETRY_WINDOW_SECONDS from the first failure; then it is failed for good.
OUTBOX_RETRY_BASE_SECONDS = env.float("OUTBOX_RETRY_BASE_SECONDS", default=20.0)
OUTBOX_RETRY_MAX_SECONDS = env.float("OUTBOX_RETRY_MAX_SECONDS", default=1800.0)
OUTBOX_RETRY_WINDOW_SECONDS = env.float("OUTBOX_RETRY_WINDOW_SECONDS", default=7200.0)

# Security. Cookie names carry __Host- where cookies are Secure (HTTPS only).
SECURE_COOKIES = env.bool("SECURE_COOKIES", default=IS_PRODUCTION)
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SESSION_COOKIE_NAME = "__Host-sessionid" if SECURE_COOKIES else "sessionid"
CSRF_COOKIE_NAME = "__Host-csrftoken" if SECURE_COOKIES else "csrftoken"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=IS_PRODUCTION)
# A balancer probes the health check over plain HTTP inside the network: answer, not redirect.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000 if IS_PRODUCTION else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = IS_PRODUCTION
SECURE_HSTS_PRELOAD = IS_PRODUCTION
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Django 6's built-in CSP, with a nonce for the few script tags we render (htmx, the page scripts).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "font-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# Celery (broker, queues, limits, the beat schedule) in its own module, from the same environment.
from config.celery_settings import *  # noqa: E402, F403

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
