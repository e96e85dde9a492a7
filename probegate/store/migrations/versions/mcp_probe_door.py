"""Which door a probe call came through: ``probecall.door`` (rest | mcp | mitm).

Existing rows get ``rest``, or ``mitm`` where ``via`` says so.

Revision ID: mcp_probe_door
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "mcp_probe_door"
down_revision = "distributed_attempt_claims"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("probecall", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("door", sqlmodel.sql.sqltypes.AutoString(), nullable=False, server_default="rest")
        )
    op.execute("UPDATE probecall SET door = 'mitm' WHERE via = 'mitm'")


def downgrade() -> None:
    with op.batch_alter_table("probecall", schema=None) as batch_op:
        batch_op.drop_column("door")
