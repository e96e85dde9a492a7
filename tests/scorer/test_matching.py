"""docs/metrics.md §2-§6: argument modes, retries, order modes, misuse split. One row per rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from probegate.scorer.judge.matching import ActualCall, align, compare_args, fold_retries, matches
from probegate.tasks.loader import ExpectedAction


def E(tool: str, match: str = "normalized", side_effect: bool = False, **args: object) -> ExpectedAction:
    return ExpectedAction(tool=tool, args=args, match=match, side_effect=side_effect)  # type: ignore[arg-type]


def C(index: int, tool: str, status: str = "ok", group: int | None = None, **args: object) -> ActualCall:
    return ActualCall(index=index, tool=tool, args=dict(args), status=status, group=group)


# -- §3 arguments -------------------------------------------------------------------------
ARG_CASES = [
    # rule, mode, expected, actual, match?
    ("exact: identical", "exact", {"n": 1, "s": "A"}, {"n": 1, "s": "A"}, True),
    ("exact: 1 vs 1.0 differ", "exact", {"n": 1}, {"n": 1.0}, False),
    ("exact: 1 vs '1' differ", "exact", {"n": 1}, {"n": "1"}, False),
    ("exact: true vs 1 differ", "exact", {"b": True}, {"b": 1}, False),
    ("exact: case matters", "exact", {"s": "Berlin"}, {"s": "berlin"}, False),
    ("exact: extra key fails", "exact", {"s": "a"}, {"s": "a", "t": 1}, False),
    ("exact: list order matters", "exact", {"l": [1, 2]}, {"l": [2, 1]}, False),
    ("normalized: case and spaces", "normalized", {"city": "New York"}, {"city": "  new   YORK "}, True),
    ("normalized: NFKC full-width", "normalized", {"sku": "SKU-1001"}, {"sku": "ＳＫＵ-１００１"}, True),
    ("normalized: 1 vs 1.0", "normalized", {"n": 1}, {"n": 1.0}, True),
    ("normalized: 1 vs '1'", "normalized", {"n": 1}, {"n": "1"}, True),
    ("normalized: '2.50' vs 2.5", "normalized", {"n": 2.5}, {"n": "2.50"}, True),
    ("normalized: '1,000' is text", "normalized", {"n": 1000}, {"n": "1,000"}, False),
    ("normalized: true vs 'true'", "normalized", {"b": True}, {"b": "true"}, True),
    ("normalized: true vs 1 differ", "normalized", {"b": True}, {"b": 1}, False),
    ("normalized: alias NYC", "normalized", {"city": "New York"}, {"city": "NYC"}, True),
    ("normalized: alias 北京", "normalized", {"city": "Beijing"}, {"city": "北京"}, True),
    ("normalized: currency alias", "normalized", {"currency": "USD"}, {"currency": "$"}, True),
    ("normalized: alias only for its parameter", "normalized", {"name": "New York"}, {"name": "NYC"}, False),
    ("normalized: email case and display name", "normalized", {"to": "a.b@x.example"}, {"to": "A.B <A.B@X.example>"}, True),
    ("normalized: phone digits", "normalized", {"phone": "+49 30 5550 100"}, {"phone": "+49-30-5550100"}, True),
    ("normalized: date formats", "normalized", {"date": "2025-03-17"}, {"date": "March 17, 2025"}, True),
    ("normalized: lists are multisets", "normalized", {"cc": ["a@x.example", "b@x.example"]}, {"cc": ["B@x.example", "a@x.example"]}, True),
    ("normalized: list multiplicity counts", "normalized", {"l": ["a", "a"]}, {"l": ["a"]}, False),
    ("normalized: nested objects", "normalized", {"o": {"k": "V"}}, {"o": {"k": " v"}}, True),
    ("normalized: extra key fails", "normalized", {"city": "Berlin"}, {"city": "Berlin", "units": "metric"}, False),
    ("normalized: null counts as absent", "normalized", {"city": "Berlin"}, {"city": "Berlin", "units": None}, True),
    ("normalized: missing key fails", "normalized", {"city": "Berlin", "days": 3}, {"city": "Berlin"}, False),
    ("normalized: no substring", "normalized", {"account": "ACC-123"}, {"account": "ACC-1234"}, False),
    ("normalized: no prefix", "normalized", {"account": "ACC-1234"}, {"account": "ACC-123"}, False),
    ("subset: extra keys ignored", "subset", {"city": "Berlin"}, {"city": "berlin", "units": "metric"}, True),
    ("subset: listed key must be present", "subset", {"city": "Berlin", "days": 3}, {"city": "Berlin"}, False),
    ("subset: listed values normalized and compared", "subset", {"to": "a@x.example"}, {"to": "b@x.example", "subject": "s"}, False),
    ("any: only the tool counts", "any", {"city": "Berlin"}, {"city": "Paris", "x": 1}, True),
]


@pytest.mark.parametrize(("rule", "mode", "expected", "actual", "ok"), ARG_CASES, ids=[c[0] for c in ARG_CASES])
def test_argument_rules(rule: str, mode: str, expected: dict, actual: dict, ok: bool) -> None:
    assert (compare_args(expected, actual, mode) == []) is ok, rule  # type: ignore[arg-type]


def test_diffs_name_the_key_and_reason() -> None:
    diffs = compare_args({"to": "a@x.example", "subject": "Q3"}, {"to": "b@x.example", "cc": "c@x.example"}, "normalized")
    assert [(d.key, d.reason) for d in diffs] == [("cc", "unexpected"), ("subject", "missing"), ("to", "different")]


def test_unreadable_arguments_never_match() -> None:
    assert compare_args({"a": 1}, None, "normalized")[0].reason == "unreadable"
    assert compare_args({}, None, "any") == []


def test_blocked_call_never_matches_but_error_call_can() -> None:
    action = E("get_order", order_id="ORD-1")
    assert not matches(action, C(0, "get_order", status="blocked", order_id="ORD-1"))
    assert matches(action, C(0, "get_order", status="error", order_id="ORD-1"))
    assert not matches(action, C(0, "get_orders", order_id="ORD-1"))


# -- §2 retries -----------------------------------------------------------------------------
RETRY_CASES = [
    ("error then same tool: recovery", [C(0, "t", "error"), C(1, "t")], [1], [0]),
    ("blocked then same tool: recovery", [C(0, "t", "blocked"), C(1, "t")], [1], [0]),
    ("chains fold", [C(0, "t", "blocked"), C(1, "t", "blocked"), C(2, "t")], [2], [0, 1]),
    ("failure then other tool: kept", [C(0, "t", "error"), C(1, "u")], [0, 1], []),
    ("last failure: kept", [C(0, "t"), C(1, "t", "error")], [0, 1], []),
    ("ok then same tool: not a retry", [C(0, "t"), C(1, "t")], [0, 1], []),
]


@pytest.mark.parametrize(("rule", "calls", "kept", "retried"), RETRY_CASES, ids=[c[0] for c in RETRY_CASES])
def test_retry_folding(rule: str, calls: list[ActualCall], kept: list[int], retried: list[int]) -> None:
    k, r = fold_retries(calls)
    assert [c.index for c in k] == kept, rule
    assert [c.index for c in r] == retried, rule


def test_retry_after_tool_error_is_recovery_not_extra() -> None:
    a = align([E("get_weather", city="Berlin")], [C(0, "get_weather", "error", city="Berlin"), C(1, "get_weather", city="Berlin")])
    assert a.recoveries == (0,)
    assert a.matched == ((0, 1),) and a.extra == () and a.complete and a.clean
    assert a.accuracy == 1.0


# -- §4 order modes ------------------------------------------------------------------------------
A, B, S = E("a", x=1), E("b", y=2), E("send", side_effect=True, to="t@x.example")
ORDER_CASES = [
    # rule, order, expected, calls, matched, extra, missing, complete, clean
    ("strict: in order", "strict", [A, B], [C(0, "a", x=1), C(1, "b", y=2)], [(0, 0), (1, 1)], [], [], True, True),
    ("strict: out of order matches one", "strict", [A, B], [C(0, "b", y=2), C(1, "a", x=1)], [(0, 1)], [0], [1], False, False),
    ("strict: extra in between is not allowed", "strict", [A, B], [C(0, "a", x=1), C(1, "c"), C(2, "b", y=2)], [(0, 0), (1, 2)], [1], [], True, False),
    ("strict: parallel group in any order", "strict", [A, B], [C(0, "b", group=7, y=2), C(1, "a", group=7, x=1)], [(0, 1), (1, 0)], [], [], True, True),
    ("strict: separate turns keep their order", "strict", [A, B], [C(0, "b", group=7, y=2), C(1, "a", group=8, x=1)], [(0, 1)], [0], [1], False, False),
    ("unordered: any order", "unordered", [A, B], [C(0, "b", y=2), C(1, "a", x=1)], [(0, 1), (1, 0)], [], [], True, True),
    ("unordered: extra not allowed", "unordered", [A], [C(0, "a", x=1), C(1, "c")], [(0, 0)], [1], [], True, False),
    ("subset: optional read-only action", "subset", [A, S], [C(0, "send", to="t@x.example")], [(1, 0)], [], [], True, True),
    ("subset: side effect is required", "subset", [A, S], [C(0, "a", x=1)], [(0, 0)], [], [1], False, True),
    ("subset: call outside the expected set", "subset", [A, S], [C(0, "send", to="t@x.example"), C(1, "c")], [(1, 0)], [], [], True, False),
    ("subset: zero calls is not complete", "subset", [A], [], [], [], [0], False, True),
    ("superset: extra read-only allowed", "superset", [A], [C(0, "c"), C(1, "a", x=1)], [(0, 1)], [], [], True, True),
    ("superset: extra side effect not allowed", "superset", [A], [C(0, "a", x=1), C(1, "send", to="t@x.example")], [(0, 0)], [1], [], True, False),
    ("superset: every expected must match", "superset", [A, B], [C(0, "a", x=1)], [(0, 0)], [], [1], False, True),
]


@pytest.mark.parametrize(
    ("rule", "order", "expected", "calls", "matched", "extra", "missing", "complete", "clean"),
    ORDER_CASES,
    ids=[c[0] for c in ORDER_CASES],
)
def test_order_modes(rule, order, expected, calls, matched, extra, missing, complete, clean) -> None:  # type: ignore[no-untyped-def]
    a = align(expected, calls, order, side_effect_tools={"send"})
    assert [tuple(p) for p in a.matched] == sorted(matched), rule
    assert list(a.extra) == extra, rule
    assert list(a.missing) == missing, rule
    assert a.complete is complete, rule
    assert a.clean is clean, rule


def test_superset_extra_is_listed_as_allowed() -> None:
    a = align([A], [C(0, "c"), C(1, "a", x=1)], "superset")
    assert a.allowed_extra == (0,) and a.extra == ()


def test_subset_lists_optional_missing_separately() -> None:
    a = align([A, S], [C(0, "send", to="t@x.example")], "subset")
    assert a.optional_missing == (0,) and a.missing == ()


# -- duplicates, zero calls, misuse split -----------------------------------------------------
def test_duplicate_call_is_extra_and_accuracy_stays_below_one() -> None:
    a = align([A], [C(0, "a", x=1), C(1, "a", x=1), C(2, "a", x=1)])
    assert a.matched == ((0, 0),) and a.extra == (1, 2)
    assert a.accuracy == pytest.approx(1 / 3)
    assert not a.clean


def test_duplicated_side_effect_is_never_allowed_even_under_superset() -> None:
    a = align([S], [C(0, "send", to="t@x.example"), C(1, "send", to="t@x.example")], "superset")
    assert a.extra == (1,) and not a.clean


def test_two_identical_expected_actions_need_two_calls() -> None:
    a = align([A, A], [C(0, "a", x=1)])
    assert len(a.matched) == 1 and a.missing == (1,) and not a.complete


def test_zero_calls_when_calls_were_expected_score_nothing() -> None:
    a = align([A, B], [])
    assert a.matched == () and a.missing == (0, 1) and not a.complete
    assert a.accuracy == 0.0
    assert a.misuse_rate == 1.0


def test_misuse_rate_is_the_share_of_events_that_went_wrong() -> None:
    a = align([A, B], [C(0, "a", x=1), C(1, "b", y=9), C(2, "c")], "strict")
    assert a.misuse() == {"wrong_tool": 0, "wrong_args": 1, "extra": 1, "missing": 0}
    assert a.misuse_rate == pytest.approx(2 / 3)
    assert align([A], [C(0, "a", x=1)]).misuse_rate == 0.0


MISUSE_CASES = [
    ("wrong args: same tool, other values", [A], [C(0, "a", x=2)], {"wrong_args": 1}),
    ("wrong args: blocked call", [A], [C(0, "a", status="blocked", x="one")], {"wrong_args": 1}),
    ("wrong args: blocked call even with the right values", [A], [C(0, "a", status="blocked", x=1)], {"wrong_args": 1}),
    ("out of order is extra plus missing, not wrong args", [A, B], [C(0, "b", y=2), C(1, "a", x=1)], {"extra": 1, "missing": 1}),
    ("wrong tool: a tool the task does not use", [A], [C(0, "z")], {"wrong_tool": 1}),
    ("extra: duplicate of a done call", [A, B], [C(0, "a", x=1), C(1, "a", x=1)], {"extra": 1, "missing": 1}),
    ("missing: nothing done for it", [A, B], [C(0, "a", x=1)], {"missing": 1}),
    ("all classes at once", [A, B, S], [C(0, "a", x=9), C(1, "z"), C(2, "send", to="t@x.example"), C(3, "send", to="t@x.example")], {"wrong_args": 1, "wrong_tool": 1, "extra": 1}),
]


@pytest.mark.parametrize(("rule", "expected", "calls", "counts"), MISUSE_CASES, ids=[c[0] for c in MISUSE_CASES])
def test_misuse_split(rule: str, expected: list[ExpectedAction], calls: list[ActualCall], counts: dict[str, int]) -> None:
    a = align(expected, calls)
    want = {"wrong_tool": 0, "wrong_args": 0, "extra": 0, "missing": 0, **counts}
    assert a.misuse() == want, rule


_tools = st.sampled_from(["a", "b", "c", "send"])
_calls = st.lists(
    st.builds(lambda t, x, s: (t, x, s), _tools, st.integers(0, 2), st.sampled_from(["ok", "ok", "error", "blocked"])),
    max_size=8,
)
_expected = st.lists(st.builds(lambda t, x: (t, x), _tools, st.integers(0, 2)), min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(_expected, _calls, st.sampled_from(["strict", "unordered", "subset", "superset"]))
def test_ratios_never_exceed_one_and_pairs_are_one_to_one(expected, calls, order) -> None:  # type: ignore[no-untyped-def]
    actions = [E(t, side_effect=t == "send", x=x) for t, x in expected]
    actual = [C(i, t, s, x=x) for i, (t, x, s) in enumerate(calls)]
    a = align(actions, actual, order)
    assert 0.0 <= a.accuracy <= 1.0
    assert 0.0 <= a.misuse_rate <= 1.0
    assert len({e for e, _ in a.matched}) == len(a.matched)
    assert len({c for _, c in a.matched}) == len(a.matched)
    for e, c in a.matched:
        assert matches(actions[e], actual[c])
    if not actual:
        assert not a.complete


FREE = [
    # expected, actual, mode, differing keys
    ({"to": "a@x.example", "body": "Dear A"}, {"to": "A@x.example", "body": "Hello A, ..."}, "subset", []),
    ({"to": "a@x.example", "body": "Dear A"}, {"to": "b@x.example", "body": "Dear A"}, "subset", ["to"]),
    ({"to": "a@x.example", "body": "Dear A"}, {"to": "a@x.example"}, "normalized", []),
    ({"order_id": "ORD-5005", "reason": "late"}, {"order_id": "ORD-5006", "reason": "late"}, "normalized", ["order_id"]),
]


@pytest.mark.parametrize(("expected", "actual", "mode", "keys"), FREE)
def test_free_text_keys_are_never_compared_and_targets_always_are(expected: dict, actual: dict, mode: str, keys: list[str]) -> None:
    free = ("body", "reason")
    assert [d.key for d in compare_args(expected, actual, mode, free=free)] == keys  # type: ignore[arg-type]
