"""The domain: the product and everything said about it, as pure rules.

No I/O, no web framework, no database driver: what a product may hold (produtos, precos,
text), what a list asks for (busca), what happened to it (historico, merge), many at once
(lotes), spreadsheets (planilhas, xlsx), accounts (contas), webhooks' payloads and addresses
(webhooks) and sealed secrets (keyring). Imports nothing of catalogo but itself.
"""
