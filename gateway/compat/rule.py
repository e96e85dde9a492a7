"""What a compat rule is, and the small walkers rules share (pure)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

#: One recorded rewrite: ``{"rule", "path", "from", "to"}``.
Change = dict[str, Any]


@dataclass(frozen=True)
class Rule:
    """An opt-in request shim.

    Attributes:
        name: the ``--compat`` name.
        summary: one line: the fault it works around.
        rewrite: ``rewrite(body, value) -> changes``; edits the parsed JSON request body in
            place and returns what it changed (an empty list: nothing).
        param: ``flag`` (no value), ``number`` (optional ``=N``, a positive integer) or
            ``names`` (``=a,b,...``: names up to the next rule name).
        default: the number used when a ``number`` rule is given without ``=N``.
        unit: what the number counts (for error messages).
    """

    name: str
    summary: str
    rewrite: Callable[[dict[str, Any], Any], list[Change]]
    param: Literal["flag", "number", "names"] = "flag"
    default: int | None = None
    unit: str = ""


def messages(body: dict[str, Any]) -> list[Any]:
    """The request's ``messages`` list, or ``[]``."""
    found = body.get("messages")
    return found if isinstance(found, list) else []


def walk(node: Any, path: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Every object in a JSON tree with its path, parents first (a parent may be changed
    when it is yielded, before its children are walked)."""
    if isinstance(node, dict):
        yield node, path
        for key, value in node.items():
            yield from walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, f"{path}[{i}]")
