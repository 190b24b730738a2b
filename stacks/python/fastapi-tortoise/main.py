# The FastAPI + Tortoise ORM service for seed 002's stack: routes, the Product model, start-up state.
# One source of truth: python/fastapi-tortoise-nuitka compiles this very file.
import json
import os
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import msgpack
import orjson
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
RECORDS = json.loads(TRANSFER)  # dicts in the fixture's key order; orjson keeps it


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
    return url  # postgres://… is served by asyncpg (pool of up to 5, Tortoise's default)


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
    # orjson: compact output, shortest round-trip floats; equal to the canonical encoding here.
    return str(len(orjson.dumps(RECORDS[:n])))


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
