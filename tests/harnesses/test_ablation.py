"""The seeds' ablation variables (--protocol, --memory): the pure parts, then what each
reference harness sends the model with and without them, and the refusal of the others."""

from __future__ import annotations

import pytest

from probegate.errors import UsageError
from probegate.harnesses.ablation import (
    COMPLETION_CHECK,
    DIGEST_CHARS,
    ENTRY_CHARS,
    Ablation,
    Digest,
    digest_entry,
    step_marker,
    with_note,
)
from probegate.harnesses.code import CodeHarness
from probegate.harnesses.fc import FcHarness
from probegate.harnesses.plan import PlanHarness
from probegate.harnesses.react import ReactHarness
from probegate.harnesses.registry import HarnessOptions, expand_harnesses, get_harness
from probegate.runner.attempt import AttemptSettings, run_attempt
from probegate.tasks.loader import TaskSet
from probegate.testing import Turn
from tests.harnesses.conftest import MODEL

PROTOCOL = Ablation(protocol="steps")
MEMORY = Ablation(memory="digest")
SEARCH = Turn(tool_calls=[{"id": "c1", "name": "search_products", "arguments": {"query": "office chair"}}])
STOCK = Turn(tool_calls=[{"id": "c2", "name": "check_stock", "arguments": {"sku": "SKU-1001"}}])


# --- pure parts ---------------------------------------------------------------------------------

def test_step_marker() -> None:
    assert step_marker(3, 8) == "Step 3/8"


@pytest.mark.parametrize(
    ("tool", "arguments", "ok", "body", "entry"),
    [
        ("get_order", {"order_id": "ORD-5003"}, True, {"status": "processing", "total": 12.5},
         "get_order(ORD-5003) → status=processing, total=12.5"),
        ("get_order", '{"order_id": "ORD-5003"}', True, {"status": "shipped"}, "get_order(ORD-5003) → status=shipped"),
        ("check_stock", "{'sku': 1", False, {"error": "invalid_arguments", "hint": "send JSON"},
         "check_stock({'sku': 1) → error: error=invalid_arguments"),
        ("list", {}, True, [1, 2], "list() → [1,2]"),
    ],
)
def test_digest_entry(tool: str, arguments: object, ok: bool, body: object, entry: str) -> None:
    assert digest_entry(tool, arguments, ok, body) == entry


def test_a_digest_entry_is_bounded() -> None:
    entry = digest_entry("search", {"q": "x"}, True, {"items": ["y" * 50] * 10})
    assert len(entry) == ENTRY_CHARS and entry.endswith("…")


def test_the_digest_keeps_the_newest_entries_within_its_bound() -> None:
    digest = Digest()
    assert digest.text() is None
    digest.add("get_order", {"order_id": "ORD-1"}, True, {"status": "processing"})
    assert digest.text() == "Known so far: get_order(ORD-1) → status=processing"
    for n in range(2, 30):
        digest.add("get_order", {"order_id": f"ORD-{n}"}, True, {"status": "processing"})
    text = digest.text()
    assert text is not None and len(text) <= DIGEST_CHARS
    assert text.startswith("Known so far: ") and text.endswith("get_order(ORD-29) → status=processing")
    assert "ORD-1)" not in text  # the oldest went first


def test_a_note_joins_the_last_user_message_or_follows_as_one() -> None:
    system, user = {"role": "system", "content": "s"}, {"role": "user", "content": "q"}
    tool = {"role": "tool", "tool_call_id": "c", "content": "{}"}
    assert with_note([system, user], "Step 1/8") == [system, {"role": "user", "content": "q\n\nStep 1/8"}]
    assert with_note([system, user, tool], "n")[-1] == {"role": "user", "content": "n"}
    assert with_note([system, user], None) == [system, user]
    assert user == {"role": "user", "content": "q"}  # the history itself is untouched


def test_the_completion_check_is_asked_once_and_its_turn_has_no_marker() -> None:
    aids = PROTOCOL.start(max_steps=4)
    assert aids.note(1) == "Step 1/4" and aids.extra_turns == 0
    assert aids.check_before_answer("first")
    assert aids.extra_turns == 1
    assert aids.request([{"role": "user", "content": COMPLETION_CHECK}], 3)[-1]["content"] == COMPLETION_CHECK
    assert aids.answering_check and aids.final_answer("") == "first" and aids.final_answer("second") == "second"
    assert aids.note(4) == "Step 4/4"
    assert not aids.check_before_answer("again")
    aids.request([], 4)
    assert not aids.answering_check and aids.final_answer("") is None


def test_without_the_protocol_nothing_is_asked() -> None:
    aids = MEMORY.start(max_steps=4)
    assert aids.note(1) is None and not aids.check_before_answer("answer")
    aids.observe("get_order", {"order_id": "ORD-1"}, True, {"status": "new"})
    assert aids.note(2) == "Known so far: get_order(ORD-1) → status=new"
    off = Ablation().start(max_steps=4)
    off.observe("get_order", {"order_id": "ORD-1"}, True, {"status": "new"})
    assert off.note(2) is None and not Ablation().active


def test_bad_values_are_refused() -> None:
    with pytest.raises(ValueError, match="protocol must be off or steps"):
        Ablation(protocol="on")
    with pytest.raises(UsageError, match="--memory must be off or digest, got 'all'"):
        get_harness("fc", HarnessOptions(memory="all"))


# --- what the model receives --------------------------------------------------------------------

def _texts(rig, index: int) -> str:
    return "\n".join(str(m.get("content") or "") for m in rig.request_messages(index))


def test_fc_baseline_sends_no_marker_digest_or_check(rig, task_set: TaskSet) -> None:
    rig.script.push(SEARCH, STOCK, Turn("25 in stock."))
    outcome = rig.attempt(FcHarness(), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.steps) == ("answered", 3)
    for index in range(3):
        text = _texts(rig, index)
        assert "Step " not in text and "Known so far" not in text and COMPLETION_CHECK not in text


def test_fc_protocol_marks_each_step_and_checks_once_before_the_answer(rig, task_set: TaskSet) -> None:
    rig.script.push(SEARCH, STOCK, Turn("25 in stock."), Turn("Yes: we have 25 ErgoFlex chairs in stock."))
    outcome = rig.attempt(FcHarness(ablation=PROTOCOL), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == (
        "answered", "Yes: we have 25 ErgoFlex chairs in stock.", 4)
    assert len(rig.script.requests) == 4
    first = rig.request_messages(0)
    assert first[-1] == {"role": "user", "content": "How many ErgoFlex office chairs do we have in stock in total?"
                                                    "\n\nStep 1/8"}
    assert rig.request_messages(1)[-1] == {"role": "user", "content": "Step 2/8"}
    assert rig.request_messages(2)[-1] == {"role": "user", "content": "Step 3/8"}
    check = rig.request_messages(3)
    assert check[-2] == {"role": "assistant", "content": "25 in stock."}
    assert check[-1] == {"role": "user", "content": COMPLETION_CHECK}
    assert "Step 2/8" not in _texts(rig, 2)  # the markers are not kept in the history
    assert "Known so far" not in _texts(rig, 3)


def test_fc_protocol_lets_the_model_act_after_the_check(rig, task_set: TaskSet) -> None:
    rig.script.push(SEARCH, Turn("It is in stock."), STOCK, Turn("25."))
    outcome = rig.attempt(FcHarness(ablation=PROTOCOL), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer) == ("answered", "25.")  # asked only once
    assert [c.tool for c in rig.probe_calls()] == ["search_products", "check_stock"]
    assert sum(COMPLETION_CHECK in _texts(rig, i) for i in range(4)) == 2  # asked once, kept in the history after
    assert rig.request_messages(3)[-1] == {"role": "user", "content": "Step 4/8"}


def test_the_check_turn_is_granted_beyond_max_steps(rig, task_set: TaskSet) -> None:
    rig.script.push(SEARCH, Turn("Done."), Turn(""))
    settings = AttemptSettings(rig.gateway.url, "run1", MODEL, max_steps=2, timeout=60.0)
    outcome = run_attempt(FcHarness(ablation=PROTOCOL), task_set.get("stock-total"), 0, settings)
    assert rig.request_messages(1)[-1]["content"] == "Step 2/2"
    # an answer-less reply to the check keeps the answer given before it
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == ("answered", "Done.", 3)


def test_fc_memory_digest_follows_each_observation(rig, task_set: TaskSet) -> None:
    rig.script.push(SEARCH, STOCK, Turn("25 in stock."))
    outcome = rig.attempt(FcHarness(ablation=MEMORY), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.steps) == ("answered", 3)  # no completion check
    assert "Known so far" not in _texts(rig, 0)
    second = rig.request_messages(1)[-1]
    assert second["role"] == "user" and second["content"].startswith('Known so far: search_products(office chair) → '
                                                                      'products=[{"sku":"SKU-1001"')
    third = rig.request_messages(2)[-1]["content"]
    assert "; check_stock(SKU-1001) → " in third and "in_stock=25" in third
    assert "Step " not in _texts(rig, 2)


def test_react_protocol_and_memory(rig, task_set: TaskSet) -> None:
    rig.script.push(
        Turn('Thought: find it\nAction: search_products\nAction Input: {"query": "office chair"}'),
        Turn("Thought: done\nFinal Answer: It exists."),
        Turn('Thought: stock\nAction: check_stock\nAction Input: {"sku": "SKU-1001"}'),
        Turn("Thought: done\nFinal Answer: 25 in stock."),
    )
    outcome = rig.attempt(ReactHarness(ablation=Ablation("steps", "digest")), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == ("answered", "25 in stock.", 4)
    assert rig.request_messages(0)[-1]["content"].endswith("\n\nStep 1/8")
    second = rig.request_messages(1)[-1]["content"]
    assert second.startswith("Observation: ") and second.endswith("\nStep 2/8")
    assert "\n\nKnown so far: search_products(office chair) → products=" in second
    assert rig.request_messages(2)[-1]["content"].startswith(COMPLETION_CHECK + "\n\nKnown so far: search_products(")
    assert "Step" not in rig.request_messages(2)[-1]["content"]
    assert rig.request_messages(3)[-1]["content"].endswith("Step 4/8")


def test_react_keeps_its_answer_when_the_check_gets_no_action(rig, task_set: TaskSet) -> None:
    rig.script.push(Turn("Final Answer: 25 in stock."), Turn("Yes, everything is done."))
    outcome = rig.attempt(ReactHarness(ablation=PROTOCOL), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == ("answered", "25 in stock.", 2)


def test_plan_protocol_and_memory(rig, task_set: TaskSet) -> None:
    rig.script.push(
        Turn("1. Find the chair's SKU\n2. Check its stock"),
        SEARCH,
        STOCK,
        Turn("25 chairs."),
        Turn("25 chairs are in stock."),
    )
    outcome = rig.attempt(PlanHarness(ablation=Ablation("steps", "digest")), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == (
        "answered", "25 chairs are in stock.", 5)
    assert rig.request_messages(0)[-1]["content"].endswith("Do not execute anything yet.\n\nStep 1/8")
    assert rig.request_messages(1)[-1]["content"].endswith("Step 2/8") and "Known so far" not in _texts(rig, 1)
    third = rig.request_messages(2)[-1]["content"]
    assert "\n\nKnown so far: search_products(office chair) → " in third and third.endswith("\nStep 3/8")
    check = rig.request_messages(4)[-1]["content"]
    assert check.startswith(COMPLETION_CHECK) and "check_stock(SKU-1001) → " in check and "Step" not in check


def test_code_protocol_and_memory(rig, task_set: TaskSet) -> None:
    rig.script.push(
        Turn("```python\nprint(search_products(query='office chair')['products'][0]['sku'])\n```"),
        Turn("```python\nprint(check_stock(sku='SKU-1001')['in_stock'])\n```"),
    )
    outcome = rig.attempt(CodeHarness(ablation=Ablation("steps", "digest")), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == ("answered", "25", 2)
    assert rig.request_messages(0)[-1]["content"].endswith("\n\nStep 1/8")
    check = rig.request_messages(1)[-1]["content"]
    assert check.startswith("Your code printed:\nSKU-1001\n\n" + COMPLETION_CHECK)
    # the digest holds what the code's tool calls returned, inside the sandbox
    assert "\n\nKnown so far: search_products(office chair) → products=" in check and "Step" not in check


def test_code_keeps_its_printed_answer_when_the_check_gets_no_code(rig, task_set: TaskSet) -> None:
    rig.script.push(
        Turn("```python\nsku = search_products(query='office chair')['products'][0]['sku']\n"
             "print(check_stock(sku)['in_stock'])\n```"),
        Turn("Everything is done."),
    )
    outcome = rig.attempt(CodeHarness(ablation=PROTOCOL), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == ("answered", "25", 2)
    assert len(rig.probe_calls()) == 2  # the check ran nothing again


# --- who takes the options ----------------------------------------------------------------------

@pytest.mark.parametrize(
    "name", ["langchain", "crewai", "openai-agents", "langchain-mcp", "crewai-mcp", "ollama", 'cmd:"python agent.py"']
)
@pytest.mark.parametrize(("option", "value"), [("protocol", "steps"), ("memory", "digest")])
def test_other_harnesses_refuse_the_options(name: str, option: str, value: str) -> None:
    with pytest.raises(UsageError) as caught:
        get_harness(name, HarnessOptions(**{option: value}))
    message = str(caught.value)
    assert message.startswith(f"--{option} {value}: the {name.split(':')[0] + (':' if ':' in name else '')} harness")
    assert "reference harnesses (fc, react, plan, code)" in message and "\n" not in message


def test_all_leaves_the_frameworks_out_with_a_note() -> None:
    names, notes = expand_harnesses("all", HarnessOptions(unsafe_no_sandbox=True, protocol="steps"))
    assert names == ["fc", "react", "plan", "code"]
    assert [n.split(":")[0] for n in notes] == ["langchain left out", "crewai left out", "openai-agents left out"]


def test_a_distributed_job_carries_the_options() -> None:
    from probegate.runner.worker import AttemptJob

    job = AttemptJob(run_id="r", task_id="t", attempt=0, task_set="default", harness="fc", model="m",
                     protocol="steps", memory="digest")
    assert AttemptJob.from_json(job.to_json()) == job
    old = {k: v for k, v in job.to_json().items() if k not in ("protocol", "memory")}  # a job from before them
    assert (AttemptJob.from_json(old).protocol, AttemptJob.from_json(old).memory) == ("off", "off")
