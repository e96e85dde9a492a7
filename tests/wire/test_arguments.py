"""The arguments repair ladder: strict first, then the fixed order of repairs."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from probegate.wire.arguments import ascii_structure, parse_arguments, strip_trailing_commas

CASES = [
    # raw, value, repaired, flags
    ('{"a": 1}', {"a": 1}, False, ()),
    ("{\"q\": \"who's on call\"}", {"q": "who's on call"}, False, ()),
    ("", {}, False, ("empty_arguments",)),
    ("   \n", {}, False, ("empty_arguments",)),
    (None, {}, False, ("empty_arguments",)),
    ("{'a': 'b'}", {"a": "b"}, True, ("arguments_repaired",)),
    ("{'a': True, 'b': None}", {"a": True, "b": None}, True, ("arguments_repaired",)),
    ('{"a": 1,}', {"a": 1}, True, ("arguments_repaired",)),
    ('{"a": [1, 2,], "b": true,}', {"a": [1, 2], "b": True}, True, ("arguments_repaired",)),
    ("{\u201cq\u201d: \u201c\u660e\u5929\u201d}", {"q": "\u660e\u5929"}, True, ("arguments_repaired",)),
    ("{\u201cq\u201d\uff1a \u201cx\u201d\uff0c \u201cn\u201d: 2}", {"q": "x", "n": 2}, True, ("arguments_repaired",)),
    ('{"a": 1}{"a":', {"a": 1}, True, ("arguments_repaired", "arguments_trailing_data")),
    ('{"a": "x"} trailing words', {"a": "x"}, True, ("arguments_repaired", "arguments_trailing_data")),
    ('{"path": "notes/q3.md", "body": "Draft', None, False, ("arguments_unparseable",)),
    ("not json at all", None, False, ("arguments_unparseable",)),
    ('"{\\"a\\": 1}"', {"a": 1}, False, ("arguments_double_encoded",)),
    ("[1, 2]", [1, 2], False, ("arguments_not_object",)),
    ({"a": 1}, {"a": 1}, False, ()),
]


@pytest.mark.parametrize(("raw", "value", "repaired", "flags"), CASES)
def test_parse_arguments(raw, value, repaired, flags) -> None:
    parsed = parse_arguments(raw)
    assert parsed.value == value
    assert parsed.repaired is repaired
    assert parsed.flags == flags


def test_object_arguments_keep_compact_raw() -> None:
    assert parse_arguments({"b": [1, "é"]}).raw == '{"b":[1,"é"]}'


def test_valid_json_is_never_touched() -> None:
    raw = '{"text": "a, } ] \u201cquoted\u201d"}'
    parsed = parse_arguments(raw)
    assert parsed.value == {"text": "a, } ] \u201cquoted\u201d"} and not parsed.repaired


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1,}', '{"a": 1}'),
        ('[1, 2 , ]', '[1, 2  ]'),
        ('{"s": "a,}"}', '{"s": "a,}"}'),
        ('{"s": "\\",}"}', '{"s": "\\",}"}'),
    ],
)
def test_strip_trailing_commas(text: str, expected: str) -> None:
    assert strip_trailing_commas(text) == expected


def test_ascii_structure_escapes_inner_ascii_quote() -> None:
    fixed = ascii_structure('{\u201cq\u201d: \u201csay "hi"\u201d}')
    assert json.loads(fixed) == {"q": 'say "hi"'}


@given(st.dictionaries(st.text(), st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                                                lambda c: st.lists(c) | st.dictionaries(st.text(), c))))
def test_strict_json_roundtrips(obj) -> None:
    parsed = parse_arguments(json.dumps(obj))
    assert parsed.value == obj and not parsed.repaired and parsed.flags == ()


@given(st.text())
def test_never_raises(text: str) -> None:
    parsed = parse_arguments(text)
    assert parsed.raw == text
