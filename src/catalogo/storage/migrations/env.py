"""Alembic's entry point: migrate the connection that `catalogo.migrations` hands over, inside
the transaction it has already begun (and locked)."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    render_as_batch=connection.dialect.name == "sqlite",
    transactional_ddl=True,
)
with context.begin_transaction():
    context.run_migrations()
