"""The wire-case contract: every fixture passes through a real gateway in front of a
real local server that replays the recorded bytes, and the stored reassembly must
equal ``expected.json``.

Fixtures come from ``tests/wire_cases/`` (a vendored copy) and, when present, from
``$PROBEGATE_WIRE_CASES`` or ``../shared/wire-cases`` next to the checkout, so new
cases are picked up without copying them.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import httpx
import pytest
from sqlmodel import Session, select

from probegate.store import Exchange
from probegate.testing import Reply, ScriptedUpstream, serve_in_thread
from probegate.wire.tool_results import input_messages, pair_tool_results

HERE = Path(__file__).resolve().parent
ROOTS = [
    HERE.parent / "wire_cases",
    Path(os.environ.get("PROBEGATE_WIRE_CASES", HERE.parents[2] / "shared" / "wire-cases")),
]


def _cases() -> list[Path]:
    found: dict[str, Path] = {}
    for root in ROOTS:
        if root.is_dir():
            for case in sorted(root.iterdir()):
                if (case / "expected.json").is_file():
                    found[case.name] = case  # a newer shared copy wins
    return [found[name] for name in sorted(found)]


CASES = _cases()


def _body_file(case: Path) -> Path:
    bodies = [p for p in case.iterdir() if p.name.startswith("response.") and p.name != "response.headers.json"]
    assert len(bodies) == 1, f"{case.name} must hold exactly one response body"
    return bodies[0]


def _reply(case: Path) -> Reply:
    body_file = _body_file(case)
    data = body_file.read_bytes()
    headers: dict[str, str] = {}
    if (case / "response.headers.json").is_file():
        headers.update(json.loads((case / "response.headers.json").read_text()))
    name = body_file.name
    if name == "response.sse":
        headers.setdefault("content-type", "text/event-stream")
    elif name == "response.ndjson":
        headers.setdefault("content-type", "application/x-ndjson")
    else:
        headers.setdefault("content-type", "application/json")
        if name.endswith(".gz"):
            headers.setdefault("content-encoding", "gzip")
    if name in ("response.sse", "response.ndjson"):
        # odd-sized pieces: every split point a real network may produce is exercised
        chunks = [data[i : i + 37] for i in range(0, len(data), 37)]
        return Reply(200, list(headers.items()), chunks=chunks)
    return Reply(200, list(headers.items()), body=data)


def _endpoint(case: Path) -> str:
    path = case / "endpoint.txt"
    return path.read_text().strip() if path.is_file() else "/v1/chat/completions"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_wire_case(case: Path, gateway_factory) -> None:
    upstream = serve_in_thread(ScriptedUpstream([_reply(case)]))
    try:
        gw = gateway_factory(upstream.url)
        request_bytes = (case / "request.json").read_bytes()
        url = f"{gw.url}/r/wire/{case.name}/0{_endpoint(case)}"
        with httpx.Client(timeout=30) as client:
            with client.stream(
                "POST", url, content=request_bytes, headers={"content-type": "application/json"}
            ) as response:
                received = b"".join(response.iter_raw())
        gw.flush()
    finally:
        upstream.stop()

    sent = _body_file(case).read_bytes()
    assert received == sent, "the client must get the upstream body byte for byte"
    with Session(gw.engine) as session:
        rows = session.exec(select(Exchange).where(Exchange.task_id == case.name)).all()
    assert len(rows) == 1
    row = rows[0]
    assert row.response_raw == sent, "the recorded copy must equal the upstream bytes"
    expected = json.loads((case / "expected.json").read_text())
    completion = row.completion
    assert completion is not None
    assert completion["assistant"] == expected["assistant"]
    assert completion["usage"] == expected["usage"]
    assert set(completion["flags"]) == set(expected["flags"])
    assert row.error is None

    pairing = case / "expected.request.json"
    if pairing.is_file():
        request = json.loads(request_bytes)
        messages = request["messages"] if "messages" in request else input_messages(request["input"])
        got = [r.to_json() for r in pair_tool_results(messages)]
        assert got == json.loads(pairing.read_text())["tool_results"]


def test_cases_were_found() -> None:
    assert len(CASES) >= 13


def test_gzip_case_shape_roundtrip(tmp_path: Path) -> None:
    """The harness itself serves a .gz body with its encoding header (guards _reply)."""
    case = tmp_path / "cx-gzip"
    case.mkdir()
    (case / "response.json.gz").write_bytes(gzip.compress(b"{}"))
    reply = _reply(case)
    assert ("content-encoding", "gzip") in reply.headers
    assert gzip.decompress(reply.body) == b"{}"
