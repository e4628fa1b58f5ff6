"""The HTTP edge: settings, app factory, dependencies, request/response models, routes, error table."""
