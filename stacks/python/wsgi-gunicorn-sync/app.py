# The seed-003 WSGI micro-app: a dict/regex router and every scenario's handler, no framework.
# One source of truth: the sibling gunicorn stacks (eventlet, PyPy sync, PyPy tornado) import this file.
import functools
import itertools
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


def connect():
    """run(sql, *args): a statement with `?` placeholders on this worker's one connection to
    DATABASE_URL (opened at start-up, autocommit so no transaction stays open and changed rows
    show at once), its rows as tuples; None when DATABASE_URL is not set."""
    if DATABASE_URL.startswith("sqlite://"):
        # check_same_thread=False: the tornado and eventlet workers may call from another (green)
        # thread; timeout: the cart is written by every worker process, one writer at a time.
        db = sqlite3.connect(DATABASE_URL[len("sqlite://"):], check_same_thread=False, timeout=5, isolation_level=None)
        return lambda sql, *args: db.execute(sql, args).fetchall()
    if DATABASE_URL.startswith(("postgres://", "postgresql://")):
        try:
            import psycopg
        except ImportError:
            # PyPy: psycopg 3's ctypes binding fails on PyPy 3.9, so the PyPy stacks install pg8000.
            return connect_pg8000()
        db = psycopg.connect(DATABASE_URL, autocommit=True)
        return lambda sql, *args: db.execute(in_dialect(sql, "%s"), args).fetchall()
    return None


@functools.lru_cache(maxsize=None)
def in_dialect(sql, placeholder):
    """`sql` with each `?` written as the driver's placeholder ("%s", or ":p" numbered from 0)."""
    if placeholder == "%s":
        return sql.replace("?", "%s")
    count = itertools.count()
    return re.sub(r"\?", lambda _: f":p{next(count)}", sql)


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
    return lambda sql, *args: db.run(in_dialect(sql, ":p"), **{f"p{i}": a for i, a in enumerate(args)})


RUN = connect()


def products(environ, start_response):
    if RUN is None:
        return respond(start_response, "503 Service Unavailable", b"DATABASE_URL is not set")
    rows = RUN(PRODUCTS_SQL)
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


# The shop of scenarios/shop.toml, read from and written to DATABASE_URL on every request.
ITEM_SQL = "SELECT id, name, price FROM items WHERE id = ?"
SEARCH_SQL = "SELECT i.id, i.name, i.price FROM items i JOIN tags t ON t.item_id = i.id WHERE t.tag = ? ORDER BY i.id"
CART_SQL = "INSERT INTO cart (item_id, qty) SELECT id, ? FROM items WHERE id = ? RETURNING id, item_id, qty"
ITEM_KEYS = ("id", "name", "price")
CART_KEYS = ("id", "item_id", "qty")


def as_json(keys, row):
    return json.dumps(dict(zip(keys, row)), separators=(",", ":")).encode()


def item(environ, start_response, id_text):
    rows = RUN(ITEM_SQL, int(id_text))
    if not rows:
        return not_found(environ, start_response)
    return respond(start_response, "200 OK", as_json(ITEM_KEYS, rows[0]), JSON)


def search(environ, start_response):
    """The items tagged q, by id."""
    word = parse_qs(environ.get("QUERY_STRING", "")).get("q", [""])[-1]
    found = [dict(zip(ITEM_KEYS, row)) for row in RUN(SEARCH_SQL, word)]
    return respond(start_response, "200 OK", json.dumps(found, separators=(",", ":")).encode(), JSON)


def cart(environ, start_response):
    """The cart line written, 201; 404 for an unknown item, 400 for a body that is not {"item": n, "qty": n}."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = json.loads(environ["wsgi.input"].read(length))
    except ValueError:
        body = None
    if not isinstance(body, dict) or not all(type(body.get(key)) is int for key in ("item", "qty")):
        raise BadRequest('the body must be {"item": n, "qty": n}')
    rows = RUN(CART_SQL, body["qty"], body["item"])
    if not rows:
        return not_found(environ, start_response)
    return respond(start_response, "201 Created", as_json(CART_KEYS, rows[0]), JSON)


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
