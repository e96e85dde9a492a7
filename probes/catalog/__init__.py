"""The tool catalogue: one module per business domain, collected into one registry.

``CATALOG`` maps tool name to :class:`~probegate.probes.tool.Tool`, in a stable order
(domain modules in ``DOMAIN_MODULES`` order, tools in module order), so
``openai_tools()`` always lists the same tools the same way.
"""

from __future__ import annotations

from typing import Any

from probegate.probes.catalog import calc, calendar, crm, delegate, documents, email, files, inventory, orders, weather
from probegate.probes.tool import Tool

DOMAIN_MODULES = [weather, calendar, email, orders, inventory, documents, crm, files, calc, delegate]
CATALOG: dict[str, Tool] = {t.name: t for module in DOMAIN_MODULES for t in module.TOOLS}


def tool_names() -> list[str]:
    """Every tool name, in catalogue order."""
    return list(CATALOG)


def get_tool(name: str) -> Tool:
    """The tool called ``name``.

    Raises:
        KeyError: no such tool.
    """
    return CATALOG[name]


def unknown_tools(names: list[str] | tuple[str, ...]) -> list[str]:
    """The names in ``names`` that are not in the catalogue, in the given order."""
    return [n for n in names if n not in CATALOG]


def openai_tools(names: list[str] | tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Tool schemas in OpenAI ``tools`` format.

    Args:
        names: the tools to include, in this order; ``None`` means the whole catalogue.

    Raises:
        ValueError: a name is not in the catalogue.
    """
    chosen = tool_names() if names is None else list(names)
    missing = unknown_tools(chosen)
    if missing:
        raise ValueError(f"unknown tool(s): {', '.join(missing)}")
    return [CATALOG[n].openai() for n in chosen]


__all__ = ["CATALOG", "DOMAIN_MODULES", "get_tool", "openai_tools", "tool_names", "unknown_tools"]
