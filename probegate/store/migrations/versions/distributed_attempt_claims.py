"""Distributed runs: the ``attemptclaim`` table and the ``superseded`` mark on exchanges and probe calls.

Revision ID: distributed_attempt_claims
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "distributed_attempt_claims"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("exchange", "probecall"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("superseded", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "attemptclaim",
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("task_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("worker", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("outcome", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=True),
        sa.Column("started_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("finished_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("run_id", "task_id", "attempt"),
    )


def downgrade() -> None:
    op.drop_table("attemptclaim")
    for table in ("probecall", "exchange"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("superseded")
