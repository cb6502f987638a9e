"""The use cases: what people do with the catalog, each written once for every door.

The pages, the JSON API and the CLI call these with the store and what was asked; the rules
they apply are the domain's, the statements storage's, and HTTP or the terminal stay with
their callers. One module per concept: produtos, contas, importacoes, lotes, webhooks (with
their delivery), idempotency. May import domain, storage and runtime; never http or cli.
"""
