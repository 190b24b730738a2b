# The Werkzeug app of seed 000's stacks (python/ and pypy/werkzeug-uwsgi run this file): routes and handlers.
import json
import os
import platform
import sqlite3

import msgpack
from werkzeug.exceptions import BadRequest, HTTPException, NotFound
from werkzeug.routing import BaseConverter, Map, Rule
from werkzeug.wrappers import Request, Response

DATA_DIR = os.environ.get("DATA_DIR", ".")
DATABASE_URL = os.environ.get("DATABASE_URL", "")
DOCSTORE_URL = os.environ.get("DOCSTORE_URL", "")

# Start-up state, loaded once in uWSGI's master and shared by the forked workers; each worker opens
# its own connections after the fork (open_connections below).
with open(os.path.join(DATA_DIR, "records.msgpack"), "rb") as f:
    PACKED = msgpack.unpackb(f.read())  # the 1,000 encoded records, as bytes
with open(os.path.join(DATA_DIR, "records.json"), "rb") as f:
    TRANSFER = f.read()
RECORDS = json.loads(TRANSFER)  # dicts keep the fixture's key order, so encoding is canonical


class LowerConverter(BaseConverter):
    """A path segment of lowercase ASCII letters; Werkzeug compiles the rule's regex once, in Map."""

    regex = "[a-z]+"


URLS = Map(
    [
        Rule("/", endpoint="hello"),
        Rule("/greeting/<lower:name>", endpoint="greeting"),
        Rule("/msgpack", endpoint="msgpack"),
        Rule("/json", endpoint="json"),
        Rule("/transfer", endpoint="transfer"),
        Rule("/loop", endpoint="loop"),
        Rule("/products", endpoint="products"),
        Rule("/documents/<int:id>", endpoint="document"),
    ],
    converters={"lower": LowerConverter},
)


def text(body):
    return Response(body, mimetype="text/plain")  # text/plain; charset=utf-8, Content-Length set


def query_int(request, name, default, low, high):
    """The integer query parameter `name`; 400 when present but not a decimal integer in range."""
    value = request.args.get(name)
    if value is None:
        return default
    # isascii: str.isdigit alone accepts non-ASCII digits such as "²", which int() refuses.
    if not (value.isascii() and value.isdigit()):
        raise BadRequest(name + " must be an integer")
    number = int(value)
    if not low <= number <= high:
        raise BadRequest(name + " out of range")
    return number


def hello(request):
    return text("Hello World!")


def greeting(request, name):
    return text("Hello, " + name)


def msgpack_sum(request):
    total = 0
    for packed in PACKED:
        total += msgpack.unpackb(packed)["count"]
    return text(str(total))


def json_length(request):
    n = query_int(request, "n", 1000, 1, 1000)
    encoded = json.dumps(RECORDS[:n], separators=(",", ":")).encode()
    return text(str(len(encoded)))


def transfer(request):
    return Response(TRANSFER, mimetype="application/json")


def loop(request):
    n = query_int(request, "n", 1_000_000, 0, 10_000_000)
    count = 0
    for i in range(n):
        if (3 * i + 1) % 7 == 0:
            count += 1
    return text(str(count))


PRODUCTS_SQL = "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id"
PRODUCT_KEYS = ("id", "name", "description", "price", "stock", "created_at")


def connect_products():
    """One connection per worker process, chosen by the URL scheme; each request runs the query."""
    if DATABASE_URL.startswith("sqlite://"):
        # sqlite:///abs/path -> /abs/path. Read-only: the stack never writes the fixture.
        return sqlite3.connect("file:" + DATABASE_URL[len("sqlite://"):] + "?mode=ro", uri=True)
    if DATABASE_URL.startswith(("postgres://", "postgresql://")):
        if platform.python_implementation() == "PyPy":
            return Pg8000(DATABASE_URL)
        import psycopg

        # autocommit: no transaction stays open between requests, so a changed row shows at once.
        return psycopg.connect(DATABASE_URL, autocommit=True)
    return None


class Pg8000:
    """pg8000 (pure Python) behind psycopg's execute().fetchall(): psycopg 3 does not run on PyPy 3.9."""

    def __init__(self, url):
        from urllib.parse import urlsplit

        import pg8000.native

        parts = urlsplit(url)
        # Each statement runs on its own (autocommit): a changed row shows at once.
        self.db = pg8000.native.Connection(
            user=parts.username or "postgres",
            password=parts.password,
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 5432,
            database=parts.path.lstrip("/"),
        )

    def execute(self, sql):
        self.rows = self.db.run(sql)
        return self

    def fetchall(self):
        return self.rows


def connect_documents():
    """The docstore's documents collection; pymongo connects on first use, in the worker."""
    if not DOCSTORE_URL:
        return None
    from pymongo import MongoClient

    return MongoClient(DOCSTORE_URL)["bakeoff"]["documents"]


DB = None
DOCUMENTS = None


def open_connections():
    """This process's database and docstore connections. uWSGI loads the app once in the master and
    forks the workers (its default, not --lazy-apps), and calls this in each worker right after the
    fork, before any request (its post_fork_hook, which the CPython and PyPy plugins both honour):
    no connection is shared across fork or opened by a request."""
    global DB, DOCUMENTS
    DB = connect_products()
    DOCUMENTS = connect_documents()


try:
    import uwsgi

    uwsgi.post_fork_hook = open_connections
except ImportError:  # not under uWSGI (e.g. a WSGI server that imports the app in each process)
    open_connections()


def products(request):
    if DB is None:
        return Response("DATABASE_URL is not set", status=503, mimetype="text/plain")
    rows = DB.execute(PRODUCTS_SQL).fetchall()
    body = json.dumps([dict(zip(PRODUCT_KEYS, row)) for row in rows], separators=(",", ":"))
    return Response(body, mimetype="application/json")


def document(request, id):
    if DOCUMENTS is None:
        return Response("DOCSTORE_URL is not set", status=503, mimetype="text/plain")
    found = DOCUMENTS.find_one({"_id": id}, {"_id": 0})
    if found is None:
        raise NotFound()
    return Response(json.dumps(found, separators=(",", ":")), mimetype="application/json")


HANDLERS = {
    "hello": hello,
    "greeting": greeting,
    "msgpack": msgpack_sum,
    "json": json_length,
    "transfer": transfer,
    "loop": loop,
    "products": products,
    "document": document,
}


@Request.application
def application(request):
    adapter = URLS.bind_to_environ(request.environ)
    try:
        endpoint, args = adapter.match()
        return HANDLERS[endpoint](request, **args)
    except HTTPException as e:
        # NotFound, BadRequest, MethodNotAllowed: keep Werkzeug's status and headers (Allow), but
        # answer plain text instead of its HTML page (the contract allows text/plain or JSON only).
        response = e.get_response(request.environ)
        response.set_data("%d %s" % (e.code, e.name))
        response.mimetype = "text/plain"
        return response
