"""Tool calls an agent made to its own MCP servers, read from the recording proxy's
exchanges (``probegate serve --mcp-upstream NAME=URL``). Pure.

In this black-box mode no probe runs: the ``tools/call`` requests and results the
gateway recorded at ``/mcp/{name}`` are the attempt's actual calls. They become
``ProbeCall`` rows (never stored; door ``mcp-proxy``, ``seq`` in recorded order) so
joining, matching, loops and reports read them as they read the probe log.
"""

from __future__ import annotations

from dataclasses import replace

from probegate.scorer.rebuild.rows import AttemptRows
from probegate.store.models import Exchange, ProbeCall
from probegate.wire.mcp import messages, stream_messages, tool_calls

#: ``Exchange.path`` of the recording proxy: ``/mcp/{name}``.
PROXY_PREFIX = "/mcp/"
PROXY_DOOR = "mcp-proxy"


def is_proxy_exchange(exchange: Exchange) -> bool:
    """Whether the exchange went through the MCP recording proxy."""
    return (exchange.path or "").startswith(PROXY_PREFIX)


def _answers(exchange: Exchange) -> list[dict]:
    if exchange.stream_format == "sse":
        return stream_messages(exchange.sse_events)
    return messages(exchange.response_body)


def proxy_calls(rows: AttemptRows) -> tuple[ProbeCall, ...]:
    """The attempt's MCP proxy ``tools/call`` requests as probe-call rows, in recorded order."""
    out: list[ProbeCall] = []
    proxied = sorted((e for e in rows.exchanges if is_proxy_exchange(e)), key=lambda e: e.seq)
    for exchange in proxied:
        for call in tool_calls(exchange.request_body, _answers(exchange)):
            out.append(ProbeCall(
                id=f"{exchange.id}:{call.id}",
                run_id=rows.run_id,
                task_id=rows.task_id,
                attempt=rows.attempt,
                seq=len(out) + 1,
                at=exchange.started_at,
                tool=call.tool,
                raw_args=call.raw_args,
                args=call.args,
                missing=[],
                invalid={},
                status=call.status,
                result=call.result,
                latency_ms=exchange.latency_ms,
                door=PROXY_DOOR,
            ))
    return tuple(out)


def with_proxy_calls(rows: AttemptRows) -> AttemptRows:
    """``rows`` whose probe calls are the MCP proxy's tool calls."""
    return replace(rows, probe_calls=proxy_calls(rows))
