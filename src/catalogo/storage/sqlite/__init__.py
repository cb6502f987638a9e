"""The store in a SQLite file: store.py mixes one class per role (contas, historico,
importacoes, busca, webhooks) into SQLiteStorage; reads run inline (readers.py), writes on
one writer thread (writer.py) in its transaction (transaction.py); changes.py knows whether
anything was committed since a moment."""
