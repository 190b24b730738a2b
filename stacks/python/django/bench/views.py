# The scenario views; fixtures are loaded once per worker when this module is imported (see wsgi.py).
import json
import os
import re

import msgpack
from django.conf import settings
from django.http import HttpResponse, HttpResponseBadRequest, JsonResponse

from bench.models import Product

TEXT = "text/plain; charset=utf-8"

with open(os.path.join(settings.DATA_DIR, "records.msgpack"), "rb") as f:
    PACKED = msgpack.unpackb(f.read())  # the 1,000 encoded records, as bytes
with open(os.path.join(settings.DATA_DIR, "records.json"), "rb") as f:
    TRANSFER = f.read()
RECORDS = json.loads(TRANSFER)  # dicts keep the fixture's key order, so encoding is canonical

DIGITS = re.compile(r"[0-9]+")


def query_int(request, name, default, low, high):
    """The integer query parameter, default when absent, None when not an integer in range."""
    value = request.GET.get(name)
    if value is None:
        return default
    if not DIGITS.fullmatch(value):
        return None
    number = int(value)
    return number if low <= number <= high else None


def text(body):
    return HttpResponse(body, content_type=TEXT)


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
    if n is None:
        return HttpResponseBadRequest("n must be an integer in 1..=1000", content_type=TEXT)
    return text(str(len(json.dumps(RECORDS[:n], separators=(",", ":")).encode())))


def transfer(request):
    return HttpResponse(TRANSFER, content_type="application/json")


def count_loop(n):
    count = 0
    for i in range(n):
        if (3 * i + 1) % 7 == 0:
            count += 1
    return count


def loop(request):
    n = query_int(request, "n", 1_000_000, 0, 10_000_000)
    if n is None:
        return HttpResponseBadRequest("n must be an integer in 0..=10000000", content_type=TEXT)
    return text(str(count_loop(n)))


PRODUCT_FIELDS = ("id", "name", "description", "price", "stock", "created_at")


def products(request):
    rows = list(Product.objects.order_by("id").values(*PRODUCT_FIELDS))
    return JsonResponse(rows, safe=False)


def documents_collection():
    if not settings.DOCSTORE_URL:
        return None
    from pymongo import MongoClient

    # One client per worker, created after gunicorn forks it (no --preload).
    return MongoClient(settings.DOCSTORE_URL)["bakeoff"]["documents"]


DOCUMENTS = documents_collection()


def document(request, id):
    if DOCUMENTS is None:
        return HttpResponse("DOCSTORE_URL is not set", status=503, content_type=TEXT)
    found = DOCUMENTS.find_one({"_id": id}, {"_id": 0})
    if found is None:
        return not_found(request)
    return JsonResponse(found)


def not_found(request, exception=None):
    return HttpResponse("Not Found", status=404, content_type=TEXT)
