"""A fast local model server for benchmarks: raw ASGI, pre-serialised bodies.

``POST /v1/chat/completions`` answers a ~1 KB completion, or, when the body asks for
``"stream": true``, 200 SSE chunks paced ``--gap-ms`` apart (the pace is what the proxy
must preserve; ``"max_tokens": N`` in the body cuts the stream to N chunks, for cheap
time-to-first-chunk samples). Run: ``python -m bench.upstream --port 9001 --gap-ms 5``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from typing import Any

from probegate.testing.streams import chat_chunk, chat_completion

CONTENT = ("probegate measures how far an agent gets. " * 24)[:1000]
COMPLETION = json.dumps(chat_completion(CONTENT)).encode()
CHUNKS = [f"data: {json.dumps(chat_chunk({'content': f'tok{i} '}))}\n\n".encode() for i in range(200)]
CHUNKS.append(b"data: [DONE]\n\n")
_MAX_TOKENS = re.compile(rb'"max_tokens":\s*(\d+)')


def stream_chunks(body: bytes) -> list[bytes]:
    """The chunks to send for a stream request: all 200, or ``max_tokens`` of them, then ``[DONE]``."""
    found = _MAX_TOKENS.search(body)
    if found is None:
        return CHUNKS
    return CHUNKS[: min(int(found.group(1)), len(CHUNKS) - 1)] + CHUNKS[-1:]


def make_app(gap_ms: float) -> Any:
    gap = gap_ms / 1000.0

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if b'"stream": true' in body or b'"stream":true' in body:
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")]})
            loop = asyncio.get_running_loop()
            start = loop.time()
            for i, chunk in enumerate(stream_chunks(body)):
                delay = start + i * gap - loop.time()  # a fixed schedule, not drifting sleeps
                if delay > 0:
                    await asyncio.sleep(delay)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(COMPLETION)).encode())]})
        await send({"type": "http.response.body", "body": COMPLETION})

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--gap-ms", type=float, default=5.0)
    args = parser.parse_args()
    import uvicorn

    uvicorn.run(make_app(args.gap_ms), host="127.0.0.1", port=args.port, log_level="error",
                access_log=False, loop="uvloop", http="httptools")


if __name__ == "__main__":
    main()
