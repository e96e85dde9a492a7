"""The gateway benchmark's verdicts against issue #8's targets (pure, table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from bench import report


def _stream(gap: float = 5.2, reads: float = 201.0, gap_max: float = 7.0) -> dict[str, Any]:
    return {"gap_p50": gap, "gap_p90": gap, "gap_p99": gap + 0.3, "gap_max": gap_max, "chunks_per_stream": reads,
            "ttfc_p50": 1.0, "ttfc_p90": 1.0}


def _target(p50: float, ttfc: float, gap: float = 5.2, reads: float = 201.0, burst_reads: float = 201.0) -> dict[str, Any]:
    lat = {"p50": p50, "p90": p50 * 1.5, "p99": p50 * 3, "errors": 0}
    return {"lat1": lat, "lat32": lat, "rps": 1000.0, "rps_errors": 0, "ttfc": {"p50": ttfc, "p90": ttfc},
            "stream1": _stream(gap, reads), "stream4": _stream(gap, reads),
            "after_burst": _stream(gap, burst_reads, gap_max=90.0 if burst_reads < 200 else 7.0)}


def _results(pg_p50: float, pg_ttfc: float, lite_p50: float | None = None, written: int = 100, **pg: Any) -> dict[str, Any]:
    targets = {"direct": _target(0.1, 0.4), "probegate": {**_target(pg_p50, pg_ttfc, **pg), "captures_written": written,
                                                          "requests_sent": 100}}
    if lite_p50 is not None:
        targets["LiteLLM"] = _target(lite_p50, 8.0)
    return {"targets": targets, "notes": [], "sizes": {"seconds": 10.0},
            "machine": {"cpu": "test", "cpus": 2, "python": "3.12", "platform": "Linux",
                        "loadavg_at_start": [0.1, 0.2, 0.3]}}


@pytest.mark.parametrize(
    ("results", "index", "met"),
    [
        (_results(0.5, 1.0, lite_p50=2.0), 0, True),  # p50 added 0.4 ms
        (_results(0.7, 1.0), 0, False),  # 0.6 ms added
        (_results(0.5, 1.0, lite_p50=2.0), 1, True),  # LiteLLM adds 1.9 / 0.4 = 4.75x
        (_results(0.5, 1.0, lite_p50=1.5), 1, False),  # 3.5x
        (_results(0.5, 1.0), 1, None),  # LiteLLM not measured
        (_results(0.5, 1.4), 2, True),  # TTFC added 1.0 ms
        (_results(0.5, 1.5), 2, False),
        (_results(0.5, 1.0), 3, True),
        (_results(0.5, 1.0, gap=6.0), 3, False),  # median gap moved 0.8 ms
        (_results(0.5, 1.0, reads=190.0), 3, False),  # chunks held back and merged
        (_results(0.5, 1.0, burst_reads=190.0), 4, False),
        (_results(0.5, 1.0), 5, True),
        (_results(0.5, 1.0, written=99), 5, False),
    ],
)
def test_verdicts(results: dict[str, Any], index: int, met: bool | None) -> None:
    assert report.verdicts(results)[index].met is met


def test_a_missed_target_says_by_how_much() -> None:
    verdict = report.verdicts(_results(0.75, 1.0))[0]
    assert verdict.miss.startswith("+0.150 ms")


def test_markdown_has_every_table_and_ratio() -> None:
    text = report.gateway_markdown(_results(0.5, 1.0, lite_p50=2.1))
    for heading in ("Absolute latency", "Added over direct", "Streams on a quiet proxy", "right after the 10 s", "Targets"):
        assert heading in text
    assert "| LiteLLM | 2.000 |" in text and "| 5.0x |" in text  # LiteLLM adds 5x probegate's 0.4 ms
