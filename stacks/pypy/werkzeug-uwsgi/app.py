# Seed 000's PyPy service: Werkzeug request/response objects and its URL map, run by uWSGI's PyPy plugin.
import json
import os
import re
import sqlite3

import msgpack  # pure-Python fallback on PyPy: the seed found exactly this slow
from werkzeug.exceptions import BadRequest, HTTPException, NotFound
from werkzeug.routing import BaseConverter, Map, Rule
from werkzeug.wrappers import Request, Response

DATA_DIR = os.environ.get("DATA_DIR", ".")
DATABASE_URL = os.environ.get("DATABASE_URL", "")
DOCSTORE_URL = os.environ.get("DOCSTORE_URL", "")
TEXT = "text/plain; charset=utf-8"
JSON = "application/json"

# uWSGI loads this module in the master and forks the workers from it: the fixtures are shared,
# while database and store connections are opened by each worker on its first request.
with open(os.path.join(DATA_DIR, "records.msgpack"), "rb") as f:
    PACKED = msgpack.unpackb(f.read())  # the 1,000 encoded records, as bytes
with open(os.path.join(DATA_DIR, "records.json"), "rb") as f:
    TRANSFER = f.read()
RECORDS = json.loads(TRANSFER)  # dicts keep the fixture's key order, so encoding is canonical

DIGITS = re.compile(r"[0-9]+")


def query_int(request, name, default, low, high):
    value = request.args.get(name)
    if value is None:
        return default
    if not DIGITS.fullmatch(value):
        raise BadRequest(name + " must be an integer")
    number = int(value)
    if not low <= number <= high:
        raise BadRequest(name + " out of range")
    return number


def hello(request):
    return Response("Hello World!", content_type=TEXT)


def greeting(request, name):
    return Response("Hello, " + name, content_type=TEXT)


def msgpack_sum(request):
    total = 0
    for packed in PACKED:
        total += msgpack.unpackb(packed)["count"]
    return Response(str(total), content_type=TEXT)


def json_length(request):
    n = query_int(request, "n", 1000, 1, 1000)
    encoded = json.dumps(RECORDS[:n], separators=(",", ":")).encode()
    return Response(str(len(encoded)), content_type=TEXT)


def transfer(request):
    return Response(TRANSFER, content_type=JSON)


def count_loop(n):
    count = 0
    for i in range(n):
        if (3 * i + 1) % 7 == 0:
            count += 1
    return count


def loop(request):
    n = query_int(request, "n", 1_000_000, 0, 10_000_000)
    return Response(str(count_loop(n)), content_type=TEXT)


PRODUCTS_SQL = "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id"
PRODUCT_KEYS = ("id", "name", "description", "price", "stock", "created_at")


def connect_products():
    """A function running the products query on this worker's one connection."""
    if DATABASE_URL.startswith("sqlite://"):
        db = sqlite3.connect(DATABASE_URL[len("sqlite://"):])
        return lambda: db.execute(PRODUCTS_SQL).fetchall()
    if DATABASE_URL.startswith(("postgres://", "postgresql://")):
        from urllib.parse import urlsplit

        import pg8000.native  # pure Python: psycopg 3's ctypes binding fails on PyPy 3.9

        url = urlsplit(DATABASE_URL)
        db = pg8000.native.Connection(
            user=url.username or "postgres",
            password=url.password,
            host=url.hostname or "127.0.0.1",
            port=url.port or 5432,
            database=url.path.lstrip("/"),
        )  # each statement runs on its own (autocommit): changed rows show at once
        return lambda: db.run(PRODUCTS_SQL)
    return None


QUERY_PRODUCTS = None


def products(request):
    global QUERY_PRODUCTS
    if QUERY_PRODUCTS is None:
        QUERY_PRODUCTS = connect_products()
    rows = QUERY_PRODUCTS()
    body = json.dumps([dict(zip(PRODUCT_KEYS, row)) for row in rows], separators=(",", ":"))
    return Response(body, content_type=JSON)


def connect_documents():
    if not DOCSTORE_URL:
        return None
    from pymongo import MongoClient

    return MongoClient(DOCSTORE_URL)["bakeoff"]["documents"]


DOCUMENTS = None


def document(request, id):
    global DOCUMENTS
    if DOCUMENTS is None:
        DOCUMENTS = connect_documents()
    found = DOCUMENTS.find_one({"_id": id}, {"_id": 0})
    if found is None:
        raise NotFound()
    return Response(json.dumps(found, separators=(",", ":")), content_type=JSON)


class LowercaseConverter(BaseConverter):
    regex = "[a-z]+"


URLS = Map(
    [
        Rule("/", endpoint=hello),
        Rule("/greeting/<lower:name>", endpoint=greeting),
        Rule("/msgpack", endpoint=msgpack_sum),
        Rule("/json", endpoint=json_length),
        Rule("/transfer", endpoint=transfer),
        Rule("/loop", endpoint=loop),
        Rule("/products", endpoint=products),
        Rule("/documents/<int:id>", endpoint=document),
    ],
    converters={"lower": LowercaseConverter},
    strict_slashes=False,  # /greeting would otherwise redirect to /greeting/; the contract wants 404
    redirect_defaults=False,
)


@Request.application
def application(request):
    try:
        endpoint, args = URLS.bind_to_environ(request.environ).match()
        return endpoint(request, **args)
    except HTTPException as error:
        return Response(error.description or error.name, status=error.code, content_type=TEXT)
