# The product table of the products scenario, mapped by the Django ORM (the fixture owns the schema).
from django.db import models


class Product(models.Model):
    id = models.IntegerField(primary_key=True)
    name = models.TextField()
    description = models.TextField()
    price = models.FloatField()
    stock = models.IntegerField()
    created_at = models.TextField()

    class Meta:
        db_table = "product"
        managed = False  # created by bakeoff's fixtures, never migrated by Django
