"""What a browser is shown: the Jinja2 environment (templating.py) and each page's helpers,
by what they show: the product's pages, the list, its history, imports, and the one-time
notices after a write."""
