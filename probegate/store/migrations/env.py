"""Alembic environment: migrations run on the connection ``probegate.store.migrate`` hands in."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

from probegate.store import models  # noqa: F401  (registers the tables)

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    render_as_batch=True,  # SQLite alters tables by copying them
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
