"""Validating a tool call's arguments before it runs (pure).

Every call is checked against its tool's JSON Schema with a format checker that
knows probegate's formats (``date`` = ``YYYY-MM-DD``, ``time`` = 24-hour ``HH:MM``,
``email`` = ``name@domain.tld``). The outcome sorts the problems the way a scorer
needs them: ``missing`` required keys, ``unknown`` keys, and ``invalid`` keys with a
short reason. :func:`hint` turns them into the text the agent sees: ``plain``
feedback says only that the call was invalid, ``actionable`` feedback says exactly
how to fix each argument.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any, NamedTuple

import jsonschema

from probegate.probes.tool import Feedback

BODY_KEY = "(arguments)"
_EMAIL = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")
_TIME = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
FORMATS = jsonschema.FormatChecker(formats=())


@FORMATS.checks("email")
def is_email(value: object) -> bool:
    """``name@domain.tld`` (non-strings pass: the type check reports them)."""
    return not isinstance(value, str) or bool(_EMAIL.match(value))


@FORMATS.checks("time")
def is_time(value: object) -> bool:
    """A 24-hour ``HH:MM`` time."""
    return not isinstance(value, str) or bool(_TIME.match(value))


@FORMATS.checks("date")
def is_date(value: object) -> bool:
    """A real calendar date ``YYYY-MM-DD``."""
    if not isinstance(value, str):
        return True
    try:
        return bool(_DATE.match(value)) and date.fromisoformat(value) is not None
    except ValueError:
        return False


class Validation(NamedTuple):
    """The verdict on one call's arguments.

    Attributes:
        args: the parsed arguments (``None`` when the body is not a JSON object).
        missing: required keys that are absent, in schema order.
        unknown: keys the tool does not accept, in the order sent.
        invalid: key -> short reason (``"not an email address"``); ``(arguments)``
            when the body itself is unusable.
    """

    args: dict[str, Any] | None
    missing: list[str]
    unknown: list[str]
    invalid: dict[str, str]

    @property
    def ok(self) -> bool:
        """Whether the call may run."""
        return self.args is not None and not (self.missing or self.unknown or self.invalid)


_VALIDATORS: dict[int, tuple[dict[str, Any], jsonschema.protocols.Validator]] = {}


def _validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    cached = _VALIDATORS.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = (schema, jsonschema.Draft202012Validator(schema, format_checker=FORMATS))
        _VALIDATORS[id(schema)] = cached
    return cached[1]


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value (``string``, ``integer``, ``object``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    for kind, name in ((int, "integer"), (float, "number"), (str, "string"), (list, "array"), (dict, "object")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def parse_body(raw: bytes) -> tuple[Any, str | None]:
    """The arguments in a request body: ``(value, None)`` or ``(None, reason)``.

    An empty body means no arguments (``{}``).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    if not text.strip():
        return {}, None
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float), None
    except (ValueError, RecursionError) as exc:
        return None, f"not valid JSON ({getattr(exc, 'msg', None) or exc or type(exc).__name__})"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is out of range")
    return value


_FORMAT_REASONS = {
    "email": "not an email address",
    "date": "not a date in the form YYYY-MM-DD",
    "time": "not a 24-hour time in the form HH:MM",
}


def _reason(error: jsonschema.ValidationError) -> str:
    kind, expected = error.validator, error.validator_value
    reasons = {
        "type": lambda: f"expected {expected}, got {json_type(error.instance)}",
        "enum": lambda: "not one of: " + ", ".join(map(str, expected)),
        "format": lambda: _FORMAT_REASONS.get(expected, f"not a valid {expected}"),
        "minimum": lambda: f"must be at least {expected}",
        "maximum": lambda: f"must be at most {expected}",
        "minLength": lambda: "must not be empty" if expected == 1 else f"shorter than {expected} characters",
        "maxLength": lambda: f"longer than {expected} characters",
        "pattern": lambda: "not in the expected form",
        "maxItems": lambda: f"more than {expected} items",
        "uniqueItems": lambda: "has duplicate items",
    }
    return reasons.get(str(kind), lambda: str(error.message)[:120])()


def _coerce(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Whole floats for integer parameters become ints (JSON Schema counts 2.0 as an integer)."""
    props = schema.get("properties", {})
    return {
        k: int(v) if props.get(k, {}).get("type") == "integer" and isinstance(v, float) and v.is_integer() else v
        for k, v in args.items()
    }


def validate_args(schema: dict[str, Any], raw: bytes) -> Validation:
    """Validate a raw request body against a tool's parameter schema.

    Args:
        schema: the tool's ``parameters`` (an object schema with ``additionalProperties: false``).
        raw: the body bytes exactly as sent.

    Returns:
        The :class:`Validation`; ``args`` is set whenever the body is a JSON object.
    """
    value, problem = parse_body(raw)
    if problem is not None:
        return Validation(None, [], [], {BODY_KEY: problem})
    if not isinstance(value, dict):
        return Validation(None, [], [], {BODY_KEY: f"expected a JSON object, got {json_type(value)}"})
    props = schema.get("properties", {})
    missing = [k for k in schema.get("required", []) if k not in value]
    unknown = [k for k in value if k not in props]
    invalid: dict[str, str] = {}
    for error in _validator(schema).iter_errors(value):
        path = list(error.absolute_path)
        if not path or str(path[0]) in invalid:
            continue
        prefix = f"item {path[1]}: " if len(path) > 1 else ""
        invalid[str(path[0])] = prefix + _reason(error)
    return Validation(_coerce(value, schema), missing, unknown, invalid)


def describe(prop: dict[str, Any]) -> str:
    """What a parameter expects, in words (``"an email address such as name@example.com"``)."""
    fmt = {
        "email": "an email address such as name@example.com",
        "date": "a date in the form YYYY-MM-DD such as 2025-01-31",
        "time": "a 24-hour time in the form HH:MM such as 14:30",
    }.get(prop.get("format", ""))
    if fmt:
        return fmt
    if "enum" in prop:
        return "one of: " + ", ".join(map(str, prop["enum"]))
    kind = prop.get("type")
    if kind in ("integer", "number"):
        word = "a whole number" if kind == "integer" else "a number"
        low, high = prop.get("minimum"), prop.get("maximum")
        if low is not None and high is not None:
            return f"{word} from {low} to {high}"
        return f"{word} of at least {low}" if low is not None else word
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        return f"a JSON list (at most {prop.get('maxItems', 'any number of')} items), each {describe(prop.get('items', {}))}"
    word = "a non-empty string" if prop.get("minLength", 0) >= 1 else "a string"
    text = prop.get("description", "").rstrip(".")
    return f"{word} ({text})" if text else word


def _got(args: dict[str, Any] | None, key: str) -> str:
    if args is None or key not in args:
        return ""
    shown = json.dumps(args[key], ensure_ascii=False)
    return f" (got {shown[:60]}{'...' if len(shown) > 60 else ''})"


def hint(tool: str, schema: dict[str, Any], verdict: Validation, feedback: Feedback) -> str:
    """The hint text of a blocked call.

    ``plain``: ``"invalid parameters for send_email"``. ``actionable``: one fix per
    problem, e.g. ``"`to` must be an email address such as name@example.com (got "bob")."``
    """
    if feedback == "plain":
        return f"invalid parameters for {tool}"
    props = schema.get("properties", {})
    if BODY_KEY in verdict.invalid:
        example = ", ".join(f'"{k}": ...' for k in schema.get("required", [])) or '"key": ...'
        return f"Send the arguments of {tool} as one JSON object such as {{{example}}} ({verdict.invalid[BODY_KEY]})."
    fixes = [f"Add `{k}`: {describe(props[k])}." for k in verdict.missing]
    fixes += [f"`{k}` must be {describe(props[k])}{_got(verdict.args, k)}." for k in verdict.invalid if k in props]
    if verdict.unknown:
        names = ", ".join(f"`{k}`" for k in verdict.unknown)
        fixes.append(f"Remove {names}: {tool} accepts only {', '.join(props) or 'no arguments'}.")
    return f"Call {tool} again with these fixes: " + " ".join(fixes)


def blocked_body(tool: str, schema: dict[str, Any], verdict: Validation, feedback: Feedback) -> dict[str, Any]:
    """The 422 body of a blocked call: ``{"error": "invalid_params", "missing", "invalid", "unknown", "hint"}``."""
    return {
        "error": "invalid_params",
        "missing": verdict.missing,
        "invalid": verdict.invalid,
        "unknown": verdict.unknown,
        "hint": hint(tool, schema, verdict, feedback),
    }
