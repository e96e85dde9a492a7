"""The code harness's pure parts: finding the code in a reply, the feedback."""

from __future__ import annotations

import pytest

from probegate.harnesses.code import FAILED, SILENT, extract_code, feedback
from probegate.harnesses.sandbox import SandboxResult


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Here:\n```python\nprint(check_stock('A1'))\n```\nDone.", "print(check_stock('A1'))"),
        ("```py\nx = 1\nprint(x)\n```", "x = 1\nprint(x)"),
        ("```\nprint(2)\n```", "print(2)"),
        ("```json\n{}\n```\n```python\nprint(3)\n```", "print(3)"),
        ("```python\nprint(4)", "print(4)"),  # unclosed fence (cut by max_tokens)
        ("print(check_stock('A1'))", "print(check_stock('A1'))"),
        ("<think>```python\nprint(0)\n```</think>```python\nprint(1)\n```", "print(1)"),
        ("The answer is 5.", None),
        ("x = 5", None),  # valid Python, but it calls nothing: prose-like, not a program
        ("", None),
    ],
)
def test_extract_code(text: str, code: str | None) -> None:
    assert extract_code(text) == code


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (SandboxResult("5\n", "", 0), None),
        (SandboxResult("", "", 0), SILENT),
        (SandboxResult("", "Traceback...\nZeroDivisionError", 1),
         FAILED.format(error="Traceback...\nZeroDivisionError")),
        (SandboxResult("", "", 3), FAILED.format(error="exit status 3")),
    ],
)
def test_feedback(result: SandboxResult, message: str | None) -> None:
    assert feedback(result) == message


def test_p1_task_end_to_end_with_a_retry(rig, task_set) -> None:
    from probegate.harnesses.code import CodeHarness
    from probegate.testing import Turn

    rig.script.push(
        Turn("```python\nprint(check_stock(sku='SKU-9999')['in_stock'])\n```"),  # the probe refuses: ToolError
        Turn("Let me fix that.\n```python\nsku = search_products(query='office chair')['products'][0]['sku']\n"
             "print(check_stock(sku)['in_stock'])\n```"),
    )
    outcome = rig.attempt(CodeHarness(), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.final_answer, outcome.result.steps) == ("answered", "25", 2)
    system = rig.request_messages(0)[0]["content"]
    assert "def check_stock(sku: str, warehouse: " in system and "def search_products(query: str" in system
    retry = rig.request_messages(1)[-1]["content"]
    assert retry.startswith("Your code failed:") and "ToolError: check_stock failed (HTTP 400)" in retry
    assert [(c.tool, c.args, c.status) for c in rig.probe_calls()] == [
        ("check_stock", {"sku": "SKU-9999"}, "error"),
        ("search_products", {"query": "office chair"}, "ok"),
        ("check_stock", {"sku": "SKU-1001"}, "ok"),
    ]
    assert len(rig.exchanges()) == 2


def test_a_sandbox_stop_fails_the_task(rig, task_set) -> None:
    from probegate.harnesses.code import CodeHarness
    from probegate.testing import Turn

    rig.script.push(Turn("```python\nprint(open('/etc/passwd').read())\n```"))
    outcome = rig.attempt(CodeHarness(), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.error) == (
        "error", "the sandbox stopped the code: blocked: open /etc/passwd")


def test_no_code_then_gives_up(rig, task_set) -> None:
    from probegate.harnesses.code import NO_CODE, CodeHarness
    from probegate.testing import Turn

    rig.script.push(Turn("The answer is 25."), Turn("25"), Turn("Still 25."))
    outcome = rig.attempt(CodeHarness(), task_set, "stock-total")
    assert (outcome.result.stop, outcome.result.steps) == ("parse_failure", 3)
    assert rig.request_messages(1)[-1]["content"] == NO_CODE
