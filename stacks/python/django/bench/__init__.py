# The bench Django project and app in one package: settings, routes, views, the Product model.
