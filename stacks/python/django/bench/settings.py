# Django settings for the benchmark service, read from the bakeoff start environment.
import os

DEBUG = False
SECRET_KEY = "bakeoff-benchmark-only-not-secret"
# The address the server listens on (HOST, 127.0.0.1 by default) is the Host its clients send.
_host = os.environ.get("HOST") or "127.0.0.1"
ALLOWED_HOSTS = ["127.0.0.1", "localhost"] + ([] if _host == "127.0.0.1" else [f"[{_host}]" if ":" in _host else _host])
ROOT_URLCONF = "bench.urls"
WSGI_APPLICATION = "bench.wsgi.application"
INSTALLED_APPS = ["bench"]
# An API without sessions, users or forms: their middleware would do nothing but cost time.
# (seed 002's comment thread found the session middleware lazy, so it was never the bottleneck.)
MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"

DATA_DIR = os.environ.get("DATA_DIR", ".")
DOCSTORE_URL = os.environ.get("DOCSTORE_URL", "")


def database(url):
    if url.startswith("sqlite://"):
        config = {"ENGINE": "django.db.backends.sqlite3", "NAME": url[len("sqlite://"):]}
        if os.environ.get("DJANGO_SQLITE_WAL") == "1":
            # seed 002's comments: WAL journal + synchronous=NORMAL, set on every new connection
            # (Django 5.1+ runs init_command for SQLite).
            config["OPTIONS"] = {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"}
        return config
    if url.startswith(("postgres://", "postgresql://")):
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        return {
            "ENGINE": "django.db.backends.postgresql",  # psycopg 3
            "NAME": parts.path.lstrip("/"),
            "USER": parts.username or "postgres",
            "PASSWORD": parts.password or "",
            "HOST": parts.hostname or "127.0.0.1",
            "PORT": str(parts.port or 5432),
        }
    return {"ENGINE": "django.db.backends.dummy"}


DATABASES = {"default": database(os.environ.get("DATABASE_URL", ""))}
# Persistent connections: each sync worker keeps its one connection (seed 002 used sync mode for
# exactly this pooling behaviour), and still queries on every request.
DATABASES["default"]["CONN_MAX_AGE"] = None
