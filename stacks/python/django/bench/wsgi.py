# The WSGI entry point gunicorn serves: Django set up, routes and fixtures loaded before the first request.
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

from django.core.wsgi import get_wsgi_application  # noqa: E402

application = get_wsgi_application()

import bench.urls  # noqa: E402,F401  (imports the views: fixtures load at start-up, not on request one)
