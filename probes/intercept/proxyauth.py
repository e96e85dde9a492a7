"""Run, task and attempt from proxy credentials (pure).

A black-box agent is pointed at ``http://RUN:TASK@127.0.0.1:8080`` (or
``RUN:TASK/ATTEMPT``); its HTTP client then sends ``Proxy-Authorization: Basic
base64(RUN:TASK)`` on every plain-HTTP request and on the CONNECT of every HTTPS
tunnel.
"""

from __future__ import annotations

import base64
import binascii
from typing import NamedTuple
from urllib.parse import unquote

from probegate.ids import ADHOC_RUN, ADHOC_TASK, valid_id

USAGE = "proxy credentials must be RUN:TASK or RUN:TASK/ATTEMPT, e.g. http://run1:t01@127.0.0.1:8080"


class Attribution(NamedTuple):
    """Whom an intercepted request belongs to."""

    run: str
    task: str
    attempt: int = 0


ADHOC = Attribution(ADHOC_RUN, ADHOC_TASK, 0)


def parse_proxy_authorization(value: str | None) -> Attribution | None:
    """Decode a ``Proxy-Authorization`` header.

    Returns:
        The attribution, or ``None`` when the header is absent.

    Raises:
        ValueError: the header is present but is not ``Basic`` with ``RUN:TASK[/ATTEMPT]``
            (message: :data:`USAGE`).
    """
    if not value:
        return None
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "basic":
        raise ValueError(USAGE)
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise ValueError(USAGE) from exc
    run, sep, rest = decoded.partition(":")
    task, _, attempt = unquote(rest).partition("/")
    run = unquote(run)
    if not sep or not valid_id(run) or not valid_id(task) or (attempt and not attempt.isdigit()):
        raise ValueError(USAGE)
    return Attribution(run, task, int(attempt or 0))
