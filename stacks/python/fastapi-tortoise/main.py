# The FastAPI + Tortoise ORM service for seed 002's stack: routes, the Product model, start-up state.
# One source of truth: python/fastapi-tortoise-nuitka compiles this very file.
import json
import os
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import msgpack
from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import PlainTextResponse, Response
from pydantic import BaseModel
from starlette.convertors import Convertor, register_url_convertor
from pymongo import AsyncMongoClient
from tortoise import fields
from tortoise.contrib.fastapi import RegisterTortoise
from tortoise.models import Model

DATA_DIR = os.environ.get("DATA_DIR", ".")
DATABASE_URL = os.environ.get("DATABASE_URL", "")
DOCSTORE_URL = os.environ.get("DOCSTORE_URL", "")

with open(os.path.join(DATA_DIR, "records.msgpack"), "rb") as f:
    PACKED = msgpack.unpackb(f.read())  # the 1,000 encoded records, as bytes
with open(os.path.join(DATA_DIR, "records.json"), "rb") as f:
    TRANSFER = f.read()
RECORDS = json.loads(TRANSFER)  # dicts in the fixture's key order, which both encoders keep
POOL_SIZE = int(os.environ.get("POOL_SIZE") or 8)


def json_encoder():
    """The /json encoder: stdlib json by default (what FastAPI's JSONResponse uses), orjson for the
    `orjson` variant (JSON_LIBRARY=orjson). Both print compact output with shortest round-trip floats."""
    if os.environ.get("JSON_LIBRARY") == "orjson":
        import orjson

        return orjson.dumps
    return lambda value: json.dumps(value, separators=(",", ":")).encode()


ENCODE_JSON = json_encoder()


class Product(Model):
    id = fields.IntField(primary_key=True)
    name = fields.TextField()
    description = fields.TextField()
    price = fields.FloatField()
    stock = fields.IntField()
    created_at = fields.TextField()

    class Meta:
        table = "product"


class ProductOut(BaseModel):
    id: int
    name: str
    description: str
    price: float
    stock: int
    created_at: str


class LowercaseName(Convertor):
    """Greeting names: the router matches [a-z]+, so anything else is a 404 (not a 422)."""

    regex = "[a-z]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("lower", LowercaseName())


def tortoise_url(url: str) -> str:
    if url.startswith("sqlite://"):
        # Tortoise switches SQLite files to WAL by default, which rewrites the fixture database and
        # adds files beside it; keep the file's own rollback journal instead.
        return url + "?journal_mode=delete"
    # postgres://… is served by asyncpg: a pool of up to POOL_SIZE connections (Tortoise's default is 5).
    return url + ("&" if "?" in url else "?") + "minsize=1&maxsize=%d" % POOL_SIZE


@asynccontextmanager
async def lifespan(app: FastAPI):
    # Runs in each worker after gunicorn forks it: connections belong to the worker's event loop.
    async with AsyncExitStack() as stack:
        if DATABASE_URL:
            # Tortoise's FastAPI integration; it makes the ORM context visible to request tasks.
            await stack.enter_async_context(
                RegisterTortoise(app, db_url=tortoise_url(DATABASE_URL), modules={"models": [__name__]})
            )
        if DOCSTORE_URL:
            mongo = AsyncMongoClient(DOCSTORE_URL)
            stack.push_async_callback(mongo.close)
            app.state.documents = mongo["bakeoff"]["documents"]
        yield


app = FastAPI(lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)


@app.exception_handler(RequestValidationError)
async def bad_request(request: Request, error: RequestValidationError) -> Response:
    # The scenarios want 400 for a bad query parameter; FastAPI's default is 422.
    return PlainTextResponse("bad request: " + str(error.errors()[0].get("msg")), status_code=400)


@app.get("/", response_class=PlainTextResponse)
async def hello() -> str:
    return "Hello World!"


@app.get("/greeting/{name:lower}", response_class=PlainTextResponse)
async def greeting(name: str) -> str:
    return "Hello, " + name


@app.get("/msgpack", response_class=PlainTextResponse)
async def msgpack_sum() -> str:
    total = 0
    for packed in PACKED:
        total += msgpack.unpackb(packed)["count"]
    return str(total)


@app.get("/json", response_class=PlainTextResponse)
async def json_length(n: int = Query(1000, ge=1, le=1000)) -> str:
    return str(len(ENCODE_JSON(RECORDS[:n])))


@app.get("/transfer")
async def transfer() -> Response:
    return Response(TRANSFER, media_type="application/json")


def count_loop(n: int) -> int:
    count = 0
    for i in range(n):
        if (3 * i + 1) % 7 == 0:
            count += 1
    return count


@app.get("/loop", response_class=PlainTextResponse)
async def loop(n: int = Query(1_000_000, ge=0, le=10_000_000)) -> str:
    return str(count_loop(n))


@app.get("/products")
async def products() -> list[ProductOut]:
    # The declared return type makes FastAPI serialise through Pydantic straight to JSON bytes.
    return await Product.all().order_by("id").values(
        "id", "name", "description", "price", "stock", "created_at"
    )


@app.get("/documents/{id:int}")
async def document(id: int, request: Request) -> dict[str, Any]:
    found = await request.app.state.documents.find_one({"_id": id}, {"_id": 0})
    if found is None:
        raise HTTPException(status_code=404)
    return found
