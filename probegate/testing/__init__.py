"""Helpers for testing agents and probegate itself: real servers on loopback."""

from probegate.testing.models import do_nothing_model
from probegate.testing.server import RunningServer, free_port, serve_in_thread
from probegate.testing.streams import (
    chat_chunk,
    chat_completion,
    chat_stream,
    ndjson,
    ollama_chat,
    ollama_chat_stream,
    response_object,
    responses_stream,
    sse,
    sse_events,
)
from probegate.testing.upstream import ReceivedRequest, Reply, ScriptedUpstream, Turn

__all__ = [
    "ReceivedRequest",
    "Reply",
    "RunningServer",
    "ScriptedUpstream",
    "Turn",
    "chat_chunk",
    "chat_completion",
    "chat_stream",
    "do_nothing_model",
    "free_port",
    "ndjson",
    "ollama_chat",
    "ollama_chat_stream",
    "response_object",
    "responses_stream",
    "serve_in_thread",
    "sse",
    "sse_events",
]
