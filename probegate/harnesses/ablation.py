"""The seeds' ablation variables for the reference harnesses (``fc``, ``react``, ``plan``, ``code``). Pure.

Two run variables, each changing one thing in what the model is shown:

- **execution protocol** (``--protocol steps``): before each model call the request
  carries ``Step k/N`` (``k`` this model turn, ``N`` the attempt's most turns), and
  the first time the model tries to finish it is asked the :data:`COMPLETION_CHECK`
  instead, one extra model turn (once per attempt).
- **memory digest** (``--memory digest``): a compact digest of the tool results so
  far, ``Known so far: get_order(ORD-5003) → status=processing; …``, bounded to
  :data:`DIGEST_CHARS` characters and updated after each observation.

Both notes are added to the request, not to the conversation: the harness's history
stays what it is without them (so the KV prefix of the conversation is unchanged),
and each request carries the current note once. The note goes at the end, merged
into the last user message or as a new user message (some chat templates refuse a
system message after the first).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

ProtocolMode = Literal["off", "steps"]
MemoryMode = Literal["off", "digest"]

#: ``--protocol`` values: ``off`` (default) or ``steps`` (step k/N and the completion check).
PROTOCOLS: tuple[str, ...] = ("off", "steps")
#: ``--memory`` values: ``off`` (default) or ``digest`` (the digest of earlier tool results).
MEMORIES: tuple[str, ...] = ("off", "digest")
#: The harnesses that honour ``--protocol`` and ``--memory``.
REFERENCE_HARNESSES: tuple[str, ...] = ("fc", "react", "plan", "code")

#: The marker added before each model call under ``--protocol steps``.
STEP_MARKER = "Step {k}/{n}"
#: The question asked, once per attempt, when the model first tries to finish (``--protocol steps``).
COMPLETION_CHECK = "Before answering: have you done every action the task asks? If not, call the tool now."
#: Most characters of the memory digest (older entries are dropped first).
DIGEST_CHARS = 600
#: Most characters of one digest entry.
ENTRY_CHARS = 160
DIGEST_PREFIX = "Known so far: "


def step_marker(k: int, n: int) -> str:
    """``Step k/N``: ``k`` is this model turn (1-based), ``n`` the attempt's most model turns."""
    return STEP_MARKER.format(k=k, n=n)


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def digest_entry(tool: str, arguments: Any, ok: bool, body: Any) -> str:
    """One digest entry, ``get_order(ORD-5003) → status=processing, total=12.5`` (at most
    :data:`ENTRY_CHARS` characters).

    Args:
        tool: the tool called.
        arguments: the call's arguments (a dict, or the raw text the model wrote).
        ok: the tool executed (a refusal or error is shown as ``error: ...``).
        body: the probe's JSON answer.
    """
    if isinstance(arguments, dict):
        args = ", ".join(_compact(v) for v in arguments.values())
    else:
        args = str(arguments or "").strip()
        try:
            parsed = json.loads(args) if args else {}
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            args = ", ".join(_compact(v) for v in parsed.values())
    if isinstance(body, dict):
        result = ", ".join(f"{k}={_compact(v)}" for k, v in body.items() if k != "hint")
    else:
        result = _compact(body)
    return _cut(f"{tool}({args}) → {result if ok else 'error: ' + result}", ENTRY_CHARS)


@dataclass
class Digest:
    """The memory digest of one attempt: one entry per observation, newest last.

    Args:
        max_chars: the digest's bound; the oldest entries go first when it is exceeded.
    """

    max_chars: int = DIGEST_CHARS
    entries: list[str] = field(default_factory=list)

    def add(self, tool: str, arguments: Any, ok: bool, body: Any) -> None:
        """Record one observation (see :func:`digest_entry`)."""
        self.entries.append(digest_entry(tool, arguments, ok, body))

    def text(self) -> str | None:
        """``Known so far: a → x; b → y`` within :attr:`max_chars`; ``None`` before any observation."""
        kept: list[str] = []
        size = len(DIGEST_PREFIX)
        for entry in reversed(self.entries):
            if kept and size + len(entry) + 2 > self.max_chars:
                break
            kept.insert(0, entry)
            size += len(entry) + 2
        if not kept:
            return None
        return _cut(DIGEST_PREFIX + "; ".join(kept), self.max_chars)


@dataclass(frozen=True)
class Ablation:
    """The run's ablation variables, as a harness receives them.

    Attributes:
        protocol: ``off`` or ``steps``.
        memory: ``off`` or ``digest``.
    """

    protocol: str = "off"
    memory: str = "off"

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be off or steps, got {self.protocol!r}")
        if self.memory not in MEMORIES:
            raise ValueError(f"memory must be off or digest, got {self.memory!r}")

    @property
    def active(self) -> bool:
        """Whether either variable is on."""
        return self.protocol != "off" or self.memory != "off"

    def start(self, max_steps: int) -> AttemptAblation:
        """The per-attempt state (digest, whether the completion check was asked)."""
        return AttemptAblation(self, max_steps)


@dataclass
class AttemptAblation:
    """One attempt's ablation state: what each request carries, the digest, the check.

    Attributes:
        ablation: the run's variables.
        max_steps: the attempt's most model turns (``N`` of ``Step k/N``).
        digest: the tool results so far (filled only under ``memory=digest``).
        checked: the completion check was asked.
        first_answer: the answer the model gave when the check was asked.
        answering_check: the reply being handled is the one to the completion check
            (set by :meth:`request`).
    """

    ablation: Ablation
    max_steps: int
    digest: Digest = field(default_factory=Digest)
    checked: bool = False
    first_answer: str | None = None
    answering_check: bool = False
    _check_pending: bool = False

    def observe(self, tool: str, arguments: Any, ok: bool, body: Any) -> None:
        """Record a tool result in the digest (a no-op without ``memory=digest``)."""
        if self.ablation.memory == "digest":
            self.digest.add(tool, arguments, ok, body)

    @property
    def extra_turns(self) -> int:
        """Model turns granted beyond ``max_steps``: 1 once the completion check was asked
        (the check's turn is the protocol's, not the agent's)."""
        return 1 if self.checked else 0

    def note(self, step: int) -> str | None:
        """The text added to the request of model turn ``step`` (``None``: nothing). The
        turn that answers the completion check carries no step marker (the check is its note)."""
        parts = []
        if self.ablation.memory == "digest" and (known := self.digest.text()):
            parts.append(known)
        if self.ablation.protocol == "steps" and not self._check_pending:
            parts.append(step_marker(step, self.max_steps))
        return "\n".join(parts) or None

    def request(self, messages: list[dict[str, Any]], step: int) -> list[dict[str, Any]]:
        """The messages to send for model turn ``step``: ``messages`` plus the note (a copy;
        ``messages`` itself is not changed)."""
        note = self.note(step)
        self.answering_check, self._check_pending = self._check_pending, False
        return with_note(messages, note)

    def check_before_answer(self, answer: str | None) -> bool:
        """Whether to ask the completion check now instead of accepting ``answer``: true the
        first time only, and only under ``protocol=steps``. The harness then adds the
        answer and :data:`COMPLETION_CHECK` to the conversation and asks once more; an
        answer-less reply to the check keeps ``answer`` (:meth:`final_answer`)."""
        if self.ablation.protocol != "steps" or self.checked:
            return False
        self.checked = self._check_pending = True
        self.first_answer = answer
        return True

    def final_answer(self, text: str | None) -> str | None:
        """The attempt's answer when the model stops with ``text``: ``text`` when it says
        something; else, in the reply to the completion check, the answer given before it;
        else ``None``."""
        text = (text or "").strip()
        return text or (self.first_answer if self.answering_check else None) or None


def with_note(messages: list[dict[str, Any]], note: str | None) -> list[dict[str, Any]]:
    """``messages`` with ``note`` at the end: appended to a last user message whose content
    is text, else as a new user message (a new list; the dicts are not changed)."""
    if not note:
        return messages
    out = list(messages)
    last = out[-1] if out else None
    if last is not None and last.get("role") == "user" and isinstance(last.get("content"), str):
        out[-1] = {**last, "content": f"{last['content']}\n\n{note}"}
    else:
        out.append({"role": "user", "content": note})
    return out
