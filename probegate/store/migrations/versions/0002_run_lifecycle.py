"""Run lifecycle (finished_at, probegate_version) and per-attempt indexes.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("finished_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True))
        batch_op.add_column(sa.Column("probegate_version", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
    with op.batch_alter_table("exchange", schema=None) as batch_op:
        batch_op.create_index("ix_exchange_attempt", ["run_id", "task_id", "attempt", "seq"], unique=False)
    with op.batch_alter_table("probecall", schema=None) as batch_op:
        batch_op.create_index("ix_probecall_attempt", ["run_id", "task_id", "attempt", "seq"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("probecall", schema=None) as batch_op:
        batch_op.drop_index("ix_probecall_attempt")
    with op.batch_alter_table("exchange", schema=None) as batch_op:
        batch_op.drop_index("ix_exchange_attempt")
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.drop_column("probegate_version")
        batch_op.drop_column("finished_at")
