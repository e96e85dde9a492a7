"""Keeping secrets out of the store: regex redaction of stored bodies (pure).

Auth headers are always redacted (``probegate.gateway.headers``). Bodies are scanned with a
redaction list: by default patterns for API keys and bearer tokens; ``--redact-pii``
adds e-mail addresses; ``--redact REGEX`` adds the user's own. The client and the
upstream always see the original bytes: redaction applies to what is stored (and
exported), never to what is forwarded.

Redacting e-mail addresses also hides them from the scorer's argument matching (a
``to`` argument becomes ``[redacted]``); outcome checks still hold, since probes keep
their own world state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from probegate.errors import UsageError

MARK = "[redacted]"
SECRET_PATTERNS = (
    r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}",  # OpenAI / Anthropic style keys
    r"\bBearer\s+[A-Za-z0-9._~+/\-]{12,}=*",
    r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
    r"\bgh[pousr]_[A-Za-z0-9]{30,}\b",  # GitHub tokens
    r"\bhf_[A-Za-z0-9]{30,}\b",  # Hugging Face tokens
)
PII_PATTERNS = (r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}",)


@dataclass(frozen=True)
class Redactor:
    """A compiled redaction list."""

    pattern: re.Pattern[str] | None
    pattern_bytes: re.Pattern[bytes] | None

    def text(self, value: str) -> str:
        """``value`` with every match replaced by ``[redacted]``."""
        return self.pattern.sub(MARK, value) if self.pattern else value

    def raw(self, value: bytes) -> bytes:
        """Bytes with every match replaced (patterns applied to the bytes as ASCII)."""
        return self.pattern_bytes.sub(MARK.encode(), value) if self.pattern_bytes else value

    def json(self, value: Any) -> Any:
        """A JSON value with every string (keys too) redacted."""
        if self.pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.json(v) for k, v in value.items()}
        return value

    def __bool__(self) -> bool:
        return self.pattern is not None


def make_redactor(extra: list[str] | None = None, *, pii: bool = False, secrets: bool = True) -> Redactor:
    """Compile the redaction list.

    Args:
        extra: the user's own regexes.
        pii: also redact e-mail addresses.
        secrets: include the default API key / bearer token patterns.

    Raises:
        UsageError: a regex does not compile.
    """
    patterns = [*(SECRET_PATTERNS if secrets else ()), *(PII_PATTERNS if pii else ()), *(extra or [])]
    if not patterns:
        return Redactor(None, None)
    for p in extra or []:
        try:
            re.compile(p)
        except re.error as exc:
            raise UsageError(f"--redact {p!r} is not a valid regex: {exc}") from None
    joined = "|".join(f"(?:{p})" for p in patterns)
    return Redactor(re.compile(joined), re.compile(joined.encode()))


NO_REDACTION = Redactor(None, None)
