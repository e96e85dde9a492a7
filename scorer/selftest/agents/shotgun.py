"""Audit agent: calls every offered tool with every value harvested from the prompt, then
answers with every candidate (the agent that scored 0.41 under matched / (n + 1))."""

from __future__ import annotations

from typing import Any

from _kit import call, env, harvest, spam, tools

KIND_BY_NAME = (("email", "email"), ("to", "email"), ("date", "date"), ("time", "time"), ("start", "time"),
                ("end", "time"), ("_id", "id"), ("sku", "id"), ("number", "id"), ("quantity", "number"),
                ("amount", "number"), ("minutes", "number"))


def value(name: str, schema: dict[str, Any], found: dict[str, list[str]], pick: int) -> Any:
    if schema.get("enum"):
        return schema["enum"][pick % len(schema["enum"])]
    kind = next((k for part, k in KIND_BY_NAME if part in name), "name")
    pool = found.get(kind) or found["name"] or ["x"]
    chosen = pool[pick % len(pool)]
    if schema.get("type") in ("integer", "number"):
        digits = [v for v in found["number"]] or ["1"]
        number = float(digits[pick % len(digits)])
        return int(number) if schema.get("type") == "integer" else number
    if schema.get("type") == "array":
        return [chosen]
    return chosen


def main() -> None:
    found = harvest(env("PROBEGATE_TASK_PROMPT"))
    for tool in tools():
        props = (tool.get("parameters") or {}).get("properties") or {}
        for pick in range(3):
            call(tool["name"], {name: value(name, schema, found, pick) for name, schema in props.items()})
    print(spam())


main()
