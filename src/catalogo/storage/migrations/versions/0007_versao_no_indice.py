"""A product's events are found by version: one entry per version, unique.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24

Within a product, versions grow with event ids (each write takes the next version of a locked
row), so one index on (produto_id, versao) serves what 0006's (produto_id, id) served, a
history page newest first at any depth, and also what it could not: finding the version an edit
was based on (the three-way merge) and the removal event of a removed product without walking
the product's whole history. Unique, so no two events can ever claim one version.
"""

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# Yes: an index replaced by another that answers the same queries.
OLDER_CODE_SERVES = True


def upgrade() -> None:
    op.drop_index("eventos_produto", "eventos")
    op.create_index("eventos_versao", "eventos", ["produto_id", "versao"], unique=True)


def downgrade() -> None:
    op.drop_index("eventos_versao", "eventos")
    op.create_index("eventos_produto", "eventos", ["produto_id", "id"])
