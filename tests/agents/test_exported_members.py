"""The agents package's public names (pinned: changing them is an API change)."""

from __future__ import annotations

import agents


def test_exported_members() -> None:
    assert sorted(agents.__all__) == sorted([
        "HARNESSES", "STOP_REASONS", "AttemptOutcome", "AttemptSettings", "Harness", "HarnessContext",
        "HarnessResult", "Observation", "ProbesError", "RunConfig", "RunEvents", "RunReport", "StopReason",
        "SubAgentRunner", "ToolsClient", "attempt_urls", "execute", "get_harness", "harness_names",
        "reset_attempt", "run_attempt",
    ])
    for name in agents.__all__:
        assert hasattr(agents, name), name
