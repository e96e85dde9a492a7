"""Bringing a store's schema up to date, and refusing stores from a newer probegate."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel

from probegate.errors import StoreError
from probegate.store.models import SCHEMA_VERSION, StoreMeta


def schema_version(engine: Engine) -> int | None:
    """The schema version recorded in the store, or ``None`` for an empty store."""
    with Session(engine) as session:
        meta = session.get(StoreMeta, "schema_version")
        return int(meta.value) if meta else None


def upgrade(engine: Engine) -> None:
    """Create missing tables and record :data:`SCHEMA_VERSION`.

    Raises:
        StoreError: the store was written by a newer probegate.
    """
    SQLModel.metadata.create_all(engine)
    found = schema_version(engine)
    if found is not None and found > SCHEMA_VERSION:
        raise StoreError(
            f"the store has schema version {found}, newer than this probegate "
            f"understands ({SCHEMA_VERSION}); upgrade probegate"
        )
    if found != SCHEMA_VERSION:
        with Session(engine) as session:
            session.merge(StoreMeta(key="schema_version", value=str(SCHEMA_VERSION)))
            session.commit()
