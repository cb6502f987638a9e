"""The same spec written with other frameworks, for bench/rivals.py to measure catalogo against."""
