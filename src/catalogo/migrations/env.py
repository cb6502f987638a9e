"""Alembic's entry point: migrate the engine that `catalogo.migrations.upgrade` hands over."""

from alembic import context

engine = context.config.attributes["engine"]
with engine.begin() as connection:
    context.configure(connection=connection, render_as_batch=True, transactional_ddl=True)
    with context.begin_transaction():
        context.run_migrations()
