"""The oldest code that may serve the schema: `schema_floor`, so that instances still on the
code before a migration keep serving when it allows them to (a rolling upgrade).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28

One row: the revision of the oldest code that serves this schema correctly, written by every
`catalogo migrate` (alembic_run.py) from the migrations' own `OLDER_CODE_SERVES`: the newest
revision that does not let older code serve. An instance serves a schema at its own revision,
or at a newer one whose floor is at most its own (migrations.serves).
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None
# Does code of the revision before keep serving on this schema (docs/deploying.md)?
# No: it compares the schema's revision with its own, and knows no floor.
OLDER_CODE_SERVES = False


def upgrade() -> None:
    op.create_table("schema_floor", sa.Column("revision", sa.String(32), nullable=False))


def downgrade() -> None:
    op.drop_table("schema_floor")
