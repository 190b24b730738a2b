# Routes: Django's URL resolver, with a [a-z]+ path converter for greeting names.
from django.urls import path, register_converter

from bench import views


class LowercaseName:
    regex = "[a-z]+"

    def to_python(self, value):
        return value

    def to_url(self, value):
        return value


register_converter(LowercaseName, "lower")

urlpatterns = [
    path("", views.hello),
    path("greeting/<lower:name>", views.greeting),
    path("msgpack", views.msgpack_sum),
    path("json", views.json_length),
    path("transfer", views.transfer),
    path("loop", views.loop),
    path("products", views.products),
    path("documents/<int:id>", views.document),
]

handler404 = "bench.views.not_found"
