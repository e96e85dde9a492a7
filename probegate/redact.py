"""Keeping secrets out of the store: one redaction pass for every stored text (pure).

A :class:`Redactor` scrubs every kind of text the store keeps:

- plain text and raw bytes (:meth:`Redactor.text`, :meth:`Redactor.raw`): patterns for
  API keys and bearer tokens (always), e-mail addresses (``--redact-pii``) and the
  user's own regexes (``--redact REGEX``). A JSON string literal holding escapes
  (``"sk\\u002dproj..."``, ``"{\\"key\\": ...}"``) is decoded, scanned and written back,
  so an escaped secret is caught too;
- JSON values, keys included (:meth:`Redactor.json`);
- headers (:meth:`Redactor.headers`): a deny-list (``authorization``, ``cookie``,
  ``openai-organization``...) and any name containing ``key``, ``token``, ``secret``,
  ``auth``, ``passw``, ``credential``, ``session``, ``cookie`` or ``signature`` lose their
  value (an auth scheme such as ``Bearer`` is kept); the ``*ratelimit*`` headers, whose
  values are counts, are exempt;
- query strings (:meth:`Redactor.query`) by the same name rule plus the patterns, and
  URLs (:meth:`Redactor.url`: query and the password of ``user:password@``);
- streams (:meth:`Redactor.stream`): the string fields of consecutive events are
  joined (every ``choices[0].delta.content`` of a chat stream, every tool-call
  ``arguments`` piece...), so a key or an e-mail address split across deltas is found
  and removed from each event that holds a piece of it.

The client and the upstream always see the original bytes: redaction applies to what
is stored (and exported, and written to reports), never to what is forwarded. Where
it runs: :func:`probegate.store.redaction.redact_row`, called by the capture writer
and every other store write.

Redacting e-mail addresses also hides them from the scorer's argument matching (a
``to`` argument becomes ``[redacted]``); outcome checks still hold, since probes keep
their own world state.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus, unquote_plus, urlsplit, urlunsplit

from probegate.errors import UsageError

MARK = "[redacted]"
SECRET_PATTERNS = (
    r"\bsk-(?:proj-|ant-|svcacct-)?[A-Za-z0-9_\-]{16,}",  # OpenAI / Anthropic style keys
    r"\bBearer\s+[A-Za-z0-9._~+/\-]{12,}=*",
    r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
    r"\bgh[pousr]_[A-Za-z0-9]{30,}\b",  # GitHub tokens
    r"\bhf_[A-Za-z0-9]{30,}\b",  # Hugging Face tokens
    r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API keys
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack tokens
    r"\bglpat-[A-Za-z0-9_\-]{20,}",  # GitLab tokens
)
PII_PATTERNS = (r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}",)
#: every match of :data:`SECRET_PATTERNS` holds one of these; text without any of them
#: (and without a ``\u`` escape that could hide one) is skipped without running the regex
SECRET_ANCHORS = ("sk-", "Bearer", "AKIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "hf_", "AIza", "xox", "glpat-")
PII_ANCHORS = ("@",)

#: headers whose value is always a credential, whatever :data:`SECRET_NAME` says
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "api-key",
        "x-api-key",
        "x-goog-api-key",
        "x-auth-token",
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
        "x-amz-security-token",
    }
)
#: a header or query parameter whose name matches holds a credential
SECRET_NAME = re.compile(r"key|token|secret|auth|passw|credential|session|cookie|signature", re.IGNORECASE)
#: names that match :data:`SECRET_NAME` but carry counts (``x-ratelimit-remaining-tokens``)
COUNT_NAME = re.compile(r"ratelimit", re.IGNORECASE)

# a JSON string literal that holds at least one backslash escape (scanned when a
# ``\u`` or ``\/`` escape, which could hide a character of a secret, is present)
_ESCAPED_LITERAL = re.compile(r'"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)+"')
_SCHEME = re.compile(r"^(\s*[A-Za-z][\w.+-]*\s+)\S")
_MAX_DEPTH = 4


def secret_name(name: str) -> bool:
    """Whether a header or query parameter called ``name`` holds a credential."""
    lowered = name.strip().lower()
    return lowered in SECRET_HEADERS or (SECRET_NAME.search(lowered) is not None and not COUNT_NAME.search(lowered))


def _hidden(value: str) -> str:
    """A credential's stored form: its auth scheme (``Bearer``, ``Basic``) and the mark."""
    match = _SCHEME.match(value)
    return f"{match.group(1)}{MARK}" if match else MARK


@dataclass(frozen=True)
class Redactor:
    """A compiled redaction list (see the module docstring for what each method scrubs).

    ``pattern`` is ``None`` only for :data:`NO_REDACTION` (tests and tools that must see
    the bytes); then every method returns its input unchanged.
    """

    pattern: re.Pattern[str] | None
    #: literals one of which every match holds (``None``: unknown, the user's own patterns)
    anchors: tuple[str, ...] | None = None
    #: ``pattern`` for bytes (faster over a whole raw body than decoding it)
    pattern_bytes: re.Pattern[bytes] | None = None

    def __bool__(self) -> bool:
        return self.pattern is not None

    def may_match(self, text: str) -> bool:
        """A cheap test: ``False`` only when ``text`` certainly holds no match."""
        if self.anchors is None or "\\u" in text:
            return True
        return any(anchor in text for anchor in self.anchors)

    def _holds_match(self, text: str) -> bool:
        return self.may_match(text) and (self.pattern is not None and self.pattern.search(text) is not None
                                         or "\\u" in text or "\\/" in text)

    # -- text -----------------------------------------------------------------------
    def text(self, value: str, _depth: int = 0) -> str:
        """``value`` with every match replaced by ``[redacted]``, escaped JSON included."""
        if self.pattern is None or not value or not self.may_match(value):
            return value
        return self._literals(self.pattern.sub(MARK, value), _depth)

    def _literals(self, text: str, depth: int) -> str:
        """Scan the JSON string literals of ``text`` whose escapes could hide a match."""
        if ("\\u" in text or "\\/" in text) and depth < _MAX_DEPTH:
            return _ESCAPED_LITERAL.sub(lambda m: self._literal(m.group(), depth), text)
        return text

    def _literal(self, literal: str, depth: int) -> str:
        try:
            decoded = json.loads(literal)
        except ValueError:
            return literal
        clean = self.text(decoded, depth + 1)
        return literal if clean == decoded else json.dumps(clean, ensure_ascii=False)

    def raw(self, value: bytes) -> bytes:
        """Bytes scrubbed as UTF-8 text (undecodable bytes are kept as they are)."""
        if self.pattern is None or not value:
            return value
        if self.pattern_bytes is None:
            text = value.decode("utf-8", errors="surrogateescape")
            clean = self.text(text)
            return value if clean == text else clean.encode("utf-8", errors="surrogateescape")
        if self.anchors is not None and b"\\u" not in value and not any(a.encode() in value for a in self.anchors):
            return value
        out = self.pattern_bytes.sub(MARK.encode(), value)
        if b"\\u" in out or b"\\/" in out:
            text = out.decode("utf-8", errors="surrogateescape")
            out = self._literals(text, 0).encode("utf-8", errors="surrogateescape")
        return out

    def json(self, value: Any) -> Any:
        """A JSON value with every string (keys too) redacted; bytes as :meth:`raw`."""
        if self.pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes):
            return self.raw(value)
        if self.anchors is not None and isinstance(value, (list, dict)) and not self.may_match(_dumped(value)):
            return value  # one check over the serialised value instead of a walk (the common case)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.json(v) for k, v in value.items()}
        return value

    # -- structured text ------------------------------------------------------------
    def headers(self, headers: dict[str, str] | None) -> dict[str, str] | None:
        """Stored headers: credential headers hidden (scheme kept), the rest scrubbed."""
        if headers is None or self.pattern is None:
            return headers
        return {name: _hidden(value) if secret_name(name) else self.text(value) for name, value in headers.items()}

    def query(self, query: str) -> str:
        """A query string (``a=1&key=sk-...``): credential parameters hidden, the rest scrubbed.

        Parameters that need no change keep their exact bytes.
        """
        if not query or self.pattern is None:
            return query
        parts = []
        for part in query.split("&"):
            name, sep, value = part.partition("=")
            decoded_name = unquote_plus(name)
            if secret_name(decoded_name):
                parts.append(f"{name}{sep}{quote_plus(MARK)}" if sep else quote_plus(MARK))
                continue
            decoded = unquote_plus(value)
            clean_name, clean = self.text(decoded_name), self.text(decoded)
            if clean_name != decoded_name or clean != decoded:
                part = f"{quote_plus(clean_name)}{sep}{quote_plus(clean)}"
            parts.append(part)
        return self.text("&".join(parts))

    def url(self, url: str) -> str:
        """A URL with the password of its ``user:password@`` and its query scrubbed."""
        if not url or self.pattern is None:
            return url
        try:
            split = urlsplit(url)
        except ValueError:
            return self.text(url)
        netloc = split.netloc
        if "@" in netloc:
            userinfo, _, host = netloc.rpartition("@")
            user, sep, _password = userinfo.partition(":")
            netloc = f"{user}{sep}{MARK if sep else ''}@{host}"
        clean = urlunsplit((split.scheme, netloc, split.path, self.query(split.query), split.fragment))
        return self.text(clean)

    def stream(self, events: list[dict[str, Any]] | None, joined: Any = None) -> list[dict[str, Any]] | None:
        """Stored stream events (``{"t", "data", ...}``) scrubbed one by one and joined.

        The ``data`` of each event is parsed as JSON; the strings found at the same
        place in consecutive events (``choices.0.delta.content``) are joined and
        scanned, and a match that spans several events is removed from each of them
        (the event holding its start gets the mark). Changed events are written back
        as compact JSON; then every event's ``data`` is scrubbed as text.

        Args:
            events: the stored events.
            joined: the stream's reassembled turn, when known (``Exchange.completion``):
                when it holds no match, no secret is split across the events' text and
                the join is skipped (the common case, and the costly part).
        """
        if events is None or self.pattern is None:
            return events
        split_possible = joined is None or self._holds_match(_dumped(joined))
        if not split_possible and self.anchors is not None and not self.may_match(_dumped(events)):
            return events  # one check over the whole stream (the common case)
        changed: set[int] = set()
        parsed: list[Any] = []
        if split_possible:
            parsed = [_parse_data(e.get("data")) for e in events]
            changed = _redact_joined(self.pattern, parsed)
        out = []
        for i, event in enumerate(events):
            data = event.get("data")
            if i in changed:
                data = json.dumps(parsed[i], ensure_ascii=False, separators=(",", ":"))
            meta = {k: v for k, v in event.items() if k != "data"}
            out.append({**meta, **self.json({k: v for k, v in meta.items() if isinstance(v, str)}), "data": self.json(data)})
        return out


def _dumped(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # keys json cannot write: scan their text instead
        return str(value)


def _parse_data(data: Any) -> Any:
    if not isinstance(data, str) or not data.strip().startswith(("{", "[")):
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


Place = tuple[Any, ...]


def _leaves(value: Any, place: Place, found: list[tuple[Place, Any, Any, str]], parent: Any = None, key: Any = None) -> None:
    """Collect ``(place, container, key, string)`` for every string leaf of ``value``."""
    if isinstance(value, str) and parent is not None:
        found.append((place, parent, key, value))
    elif isinstance(value, dict):
        for k, v in value.items():
            _leaves(v, (*place, k), found, value, k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _leaves(v, (*place, i), found, value, i)


def _redact_joined(pattern: re.Pattern[str], parsed: list[Any]) -> set[int]:
    """Remove matches of ``pattern`` found in the joined strings of each place; edits
    ``parsed`` in place and returns the indexes of the events it changed."""
    by_place: dict[Place, list[tuple[int, Any, Any, str]]] = {}
    for index, value in enumerate(parsed):
        if value is None:
            continue
        found: list[tuple[Place, Any, Any, str]] = []
        _leaves(value, (), found)
        for place, container, key, text in found:
            by_place.setdefault(place, []).append((index, container, key, text))
    changed: set[int] = set()
    for pieces in by_place.values():
        if len(pieces) < 2:
            continue
        joined = "".join(text for *_, text in pieces)
        spans = [m.span() for m in pattern.finditer(joined) if m.end() > m.start()]
        if spans:
            changed |= _cut(pieces, spans)
    return changed


def _cut(pieces: list[tuple[int, Any, Any, str]], spans: list[tuple[int, int]]) -> set[int]:
    """Rewrite each piece without the parts of ``spans`` it holds; the piece holding a
    span's start gets the mark."""
    changed: set[int] = set()
    offset = 0
    for index, container, key, text in pieces:
        start, end = offset, offset + len(text)
        offset = end
        out, cursor = [], start
        for a, b in spans:
            if b <= start or a >= end:
                continue
            out.append(text[cursor - start : max(a, start) - start])
            if start <= a < end:
                out.append(MARK)
            cursor = min(b, end)
        if cursor == start and not out:
            continue
        out.append(text[cursor - start :])
        container[key] = "".join(out)
        changed.add(index)
    return changed


def make_redactor(extra: list[str] | None = None, *, pii: bool = False) -> Redactor:
    """Compile the redaction list: the secret patterns (always), e-mail addresses
    (``pii``) and the user's own regexes.

    Args:
        extra: the user's own regexes (``--redact``).
        pii: also redact e-mail addresses (``--redact-pii``).

    Raises:
        UsageError: a regex does not compile.
    """
    for p in extra or []:
        try:
            re.compile(p)
        except re.error as exc:
            raise UsageError(f"--redact {p!r} is not a valid regex: {exc}") from None
    patterns = [*SECRET_PATTERNS, *(PII_PATTERNS if pii else ()), *(extra or [])]
    anchors = None if extra else SECRET_ANCHORS + (PII_ANCHORS if pii else ())
    joined = "|".join(f"(?:{p})" for p in patterns)
    try:
        as_bytes: re.Pattern[bytes] | None = re.compile(joined.encode())
    except (re.error, UnicodeEncodeError):  # a user's regex that only makes sense for text
        as_bytes = None
    return Redactor(re.compile(joined), anchors, as_bytes)


SECRETS = make_redactor()
"""The always-on redaction list (secrets only): what every store write applies."""

NO_REDACTION = Redactor(None)
"""Nothing scrubbed (for tools that must see stored bytes as they are)."""
