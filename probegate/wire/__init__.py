"""The wire: pure parsing of what model servers send (no I/O).

Streams are split into events (:mod:`.sse`: SSE and NDJSON), each assistant turn is
reassembled from its chunks (:mod:`.reassemble`: content, tool calls joined by index,
finish reason, usage, with the wire faults found on the way), tool-call arguments are
parsed tolerantly (:mod:`.arguments`), calls written into content are found
(:mod:`.content_calls`) and tool results are paired with their calls
(:mod:`.tool_results`). The gateway, the doctor and the scorer all use these.
"""

from probegate.wire.arguments import ParsedArguments, parse_arguments
from probegate.wire.content_calls import TextCall, detect_content_calls
from probegate.wire.reassemble import Reassembly, dialect_of, reassemble
from probegate.wire.sse import NDJSONParser, SSEParser, StreamEvent, parse_stream
from probegate.wire.tool_results import ToolResult, input_messages, pair_tool_results

__all__ = [
    "NDJSONParser",
    "ParsedArguments",
    "Reassembly",
    "SSEParser",
    "StreamEvent",
    "TextCall",
    "ToolResult",
    "detect_content_calls",
    "dialect_of",
    "input_messages",
    "pair_tool_results",
    "parse_arguments",
    "parse_stream",
    "reassemble",
]
