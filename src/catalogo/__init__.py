"""catalogo: a product catalog service (see README.md and docs/)."""
