"""catalogo: a product catalog service (see README.md and docs/).

The folder is the layer (docs/layout.md); the arrows only go down, and import-linter holds
them (pyproject.toml, scripts/check):

    cli/  http/     the doors: the terminal, and HTTP (pages, JSON, the API description)
    services/       the use cases, each written once for every door
    storage/        the one interface to a database (port.py) and its two implementations
    runtime/        settings, logs, metrics, the server's process
    domain/         the rules, pure: no I/O, no framework
"""
