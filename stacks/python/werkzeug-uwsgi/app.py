# The python/werkzeug-uwsgi app: Werkzeug Map/Rule routes, Request/Response, and every scenario's handler.
import json
import os
import sqlite3

import msgpack
from werkzeug.exceptions import BadRequest, HTTPException
from werkzeug.routing import BaseConverter, Map, Rule
from werkzeug.wrappers import Request, Response

DATA_DIR = os.environ.get("DATA_DIR", ".")
DATABASE_URL = os.environ.get("DATABASE_URL", "")

# Start-up state. uWSGI runs with --lazy-apps, so each worker process loads this module itself
# (its own database connection, nothing shared across fork).
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
        import psycopg

        # autocommit: no transaction stays open between requests, so a changed row shows at once.
        return psycopg.connect(DATABASE_URL, autocommit=True)
    return None


DB = connect_products()


def products(request):
    if DB is None:
        return Response("DATABASE_URL is not set", status=503, mimetype="text/plain")
    rows = DB.execute(PRODUCTS_SQL).fetchall()
    body = json.dumps([dict(zip(PRODUCT_KEYS, row)) for row in rows], separators=(",", ":"))
    return Response(body, mimetype="application/json")


HANDLERS = {
    "hello": hello,
    "greeting": greeting,
    "msgpack": msgpack_sum,
    "json": json_length,
    "transfer": transfer,
    "loop": loop,
    "products": products,
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
