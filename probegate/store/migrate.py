"""Bringing a store's schema up to date with Alembic, and refusing newer stores.

The migration chain lives in ``probegate/store/migrations/versions``. Opening a
store runs every migration it has not seen; a store whose revision this probegate
does not know was written by a newer probegate and is refused.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import Connection, Engine

from probegate.errors import StoreError

MIGRATIONS = Path(__file__).parent / "migrations"
#: The revision a store made before migrations existed (tables, no alembic_version).
BASELINE = "0001"


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest revision this probegate knows."""
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    """The store's revision, or ``None`` for an empty (or pre-migration) store."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine) -> None:
    """Run every migration the store has not seen.

    Raises:
        StoreError: the store was written by a newer probegate.
    """
    script = ScriptDirectory.from_config(_config())
    _refuse_unknown(engine, script)
    with engine.begin() as conn:
        config = _config(conn)
        current = MigrationContext.configure(conn).get_current_revision()
        if current is None and inspect(conn).has_table("exchange"):
            command.stamp(config, BASELINE)
        if current != script.get_current_head():
            command.upgrade(config, "head")


def _refuse_unknown(engine: Engine, script: ScriptDirectory) -> None:
    current = current_revision(engine)
    if current is None:
        return
    known = {rev.revision for rev in script.walk_revisions()}
    if current not in known:
        raise StoreError(
            f"the store is at schema revision {current!r}, which this probegate does not know: "
            "it was written by a newer probegate; upgrade probegate to open it"
        )
