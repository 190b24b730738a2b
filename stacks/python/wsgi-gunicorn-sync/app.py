# The seed-003 WSGI micro-app: a dict/regex router and every scenario's handler, no framework.
# One source of truth: the sibling gunicorn stacks (eventlet, PyPy sync, PyPy tornado) import this file.
import json
import os
import re
import sqlite3
from urllib.parse import parse_qs

import msgpack

DATA_DIR = os.environ.get("DATA_DIR", ".")
DATABASE_URL = os.environ.get("DATABASE_URL", "")
DOCSTORE_URL = os.environ.get("DOCSTORE_URL", "")

TEXT = [("Content-Type", "text/plain; charset=utf-8")]
JSON = "application/json"

# Start-up state, loaded once per worker (gunicorn loads the app after fork: no --preload).
with open(os.path.join(DATA_DIR, "records.msgpack"), "rb") as f:
    PACKED = msgpack.unpackb(f.read())  # the 1,000 encoded records, as bytes
with open(os.path.join(DATA_DIR, "records.json"), "rb") as f:
    TRANSFER = f.read()
RECORDS = json.loads(TRANSFER)  # dicts keep the fixture's key order, so encoding is canonical

DIGITS = re.compile(r"[0-9]+")


class BadRequest(Exception):
    pass


def query_int(environ, name, default, low, high):
    """The integer query parameter `name`; BadRequest when present but not an integer in range."""
    values = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True).get(name)
    if values is None:
        return default
    value = values[-1]
    if not DIGITS.fullmatch(value):
        raise BadRequest(name + " must be an integer")
    number = int(value)
    if not low <= number <= high:
        raise BadRequest(name + " out of range")
    return number


def respond(start_response, status, body, content_type=None):
    headers = TEXT if content_type is None else [("Content-Type", content_type)]
    start_response(status, headers + [("Content-Length", str(len(body)))])
    return [body]


def hello(environ, start_response):
    return respond(start_response, "200 OK", b"Hello World!")


def greeting(environ, start_response, name):
    return respond(start_response, "200 OK", ("Hello, " + name).encode())


def msgpack_sum(environ, start_response):
    total = 0
    for packed in PACKED:
        total += msgpack.unpackb(packed)["count"]
    return respond(start_response, "200 OK", str(total).encode())


def json_length(environ, start_response):
    n = query_int(environ, "n", 1000, 1, 1000)
    encoded = json.dumps(RECORDS[:n], separators=(",", ":")).encode()
    return respond(start_response, "200 OK", str(len(encoded)).encode())


def transfer(environ, start_response):
    return respond(start_response, "200 OK", TRANSFER, JSON)


def count_loop(n):
    count = 0
    for i in range(n):
        if (3 * i + 1) % 7 == 0:
            count += 1
    return count


def loop(environ, start_response):
    n = query_int(environ, "n", 1_000_000, 0, 10_000_000)
    return respond(start_response, "200 OK", str(count_loop(n)).encode())


PRODUCTS_SQL = "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id"
PRODUCT_KEYS = ("id", "name", "description", "price", "stock", "created_at")


def connect_products():
    """A function running the products query on this worker's one connection (opened at start-up)."""
    if DATABASE_URL.startswith("sqlite://"):
        # check_same_thread=False: the tornado and eventlet workers may call from another (green) thread.
        db = sqlite3.connect(DATABASE_URL[len("sqlite://"):], check_same_thread=False)
        return lambda: db.execute(PRODUCTS_SQL).fetchall()
    if DATABASE_URL.startswith(("postgres://", "postgresql://")):
        try:
            import psycopg
        except ImportError:
            # PyPy: psycopg 3's ctypes binding fails on PyPy 3.9, so the PyPy stacks install pg8000.
            return connect_pg8000()
        # autocommit: no transaction is left open between requests, so changed rows show at once.
        db = psycopg.connect(DATABASE_URL, autocommit=True)
        return lambda: db.execute(PRODUCTS_SQL).fetchall()
    return None


def connect_pg8000():
    from urllib.parse import urlsplit

    import pg8000.native

    url = urlsplit(DATABASE_URL)
    # pg8000's native connection runs each statement on its own, like autocommit.
    db = pg8000.native.Connection(
        user=url.username or "postgres",
        password=url.password,
        host=url.hostname or "127.0.0.1",
        port=url.port or 5432,
        database=url.path.lstrip("/"),
    )
    return lambda: db.run(PRODUCTS_SQL)


QUERY_PRODUCTS = connect_products()


def products(environ, start_response):
    if QUERY_PRODUCTS is None:
        return respond(start_response, "503 Service Unavailable", b"DATABASE_URL is not set")
    rows = QUERY_PRODUCTS()
    body = json.dumps([dict(zip(PRODUCT_KEYS, row)) for row in rows], separators=(",", ":"))
    return respond(start_response, "200 OK", body.encode(), JSON)


def connect_documents():
    if not DOCSTORE_URL:
        return None
    from pymongo import MongoClient

    return MongoClient(DOCSTORE_URL)["bakeoff"]["documents"]


DOCUMENTS = connect_documents()


def document(environ, start_response, id_text):
    if DOCUMENTS is None:
        return respond(start_response, "503 Service Unavailable", b"DOCSTORE_URL is not set")
    found = DOCUMENTS.find_one({"_id": int(id_text)}, {"_id": 0})
    if found is None:
        return not_found(environ, start_response)
    return respond(start_response, "200 OK", json.dumps(found, separators=(",", ":")).encode(), JSON)


# The shop of scenarios/shop.toml: 50 items in memory, encoded again on every request.
WORDS = ["red", "blue", "green", "oak", "steel"]
ITEMS = {i: {"id": i, "name": f"item {i}", "tags": [WORDS[i % 5], WORDS[(i * 3) % 5]]} for i in range(1, 51)}


def item(environ, start_response, id_text):
    found = ITEMS.get(int(id_text))
    if found is None:
        return not_found(environ, start_response)
    return respond(start_response, "200 OK", json.dumps(found, separators=(",", ":")).encode(), JSON)


def search(environ, start_response):
    """The ids of the items tagged q, ascending, looked up on every request."""
    word = parse_qs(environ.get("QUERY_STRING", "")).get("q", [""])[-1]
    found = [i for i, entry in ITEMS.items() if word in entry["tags"]]
    return respond(start_response, "200 OK", json.dumps({"q": word, "items": found}, separators=(",", ":")).encode(), JSON)


def cart(environ, start_response):
    """201 for a known item, 404 for an unknown one, 400 for a body that is not {"item": n, "qty": n}."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = json.loads(environ["wsgi.input"].read(length))
    except ValueError:
        body = None
    if not isinstance(body, dict) or not all(type(body.get(key)) is int for key in ("item", "qty")):
        raise BadRequest('the body must be {"item": n, "qty": n}')
    if body["item"] not in ITEMS:
        return not_found(environ, start_response)
    return respond(start_response, "201 Created", f"added {body['qty']} of {body['item']}".encode())


def not_found(environ, start_response):
    return respond(start_response, "404 Not Found", b"Not Found")


# The router, built once: exact paths in a dict, patterns compiled once and tried in order.
EXACT = {
    "/": hello,
    "/msgpack": msgpack_sum,
    "/json": json_length,
    "/transfer": transfer,
    "/loop": loop,
    "/products": products,
    "/search": search,
}
POSTS = {"/cart": cart}
PATTERNS = [
    (re.compile(r"/greeting/([a-z]+)"), greeting),
    (re.compile(r"/documents/([0-9]{1,9})"), document),
    (re.compile(r"/items/([0-9]{1,9})"), item),
]


def application(environ, start_response):
    path = environ["PATH_INFO"]
    method = environ["REQUEST_METHOD"]
    routes = EXACT if method == "GET" else POSTS if method == "POST" else {}
    if method != "GET" and path not in routes:
        return respond(start_response, "405 Method Not Allowed", b"Method Not Allowed")
    try:
        handler = routes.get(path)
        if handler is not None:
            return handler(environ, start_response)
        for pattern, handler in PATTERNS:
            match = pattern.fullmatch(path)
            if match is not None:
                return handler(environ, start_response, *match.groups())
        return not_found(environ, start_response)
    except BadRequest as error:
        return respond(start_response, "400 Bad Request", str(error).encode())
