"""The store in PostgreSQL: store.py mixes one class per role (contas, historico,
importacoes, busca, webhooks) into PostgresStorage, every statement on pool.py's asyncpg
pool."""
