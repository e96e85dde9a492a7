"""Finding a claimed side effect in a final answer ("I have sent the email"). Pure.

A claim is a completion verb in the past (``sent``, ``created``, ``已发送``...) that is
not negated or hedged in the same clause (``not sent``, ``couldn't be created``,
``will be sent``, ``未发送``, ``发送失败``). Used by ``fake_completion``.
"""

from __future__ import annotations

import re

_EN = re.compile(
    r"\b(sent|e-?mailed|created|booked|scheduled|ordered|placed|cancell?ed|refunded|updated|saved|"
    r"written|added|submitted|filed|reserved|deleted|opened|raised|escalated|forwarded|replied|"
    r"delivered|set up|logged|recorded|completed)\b",
    re.IGNORECASE,
)
_ZH = re.compile(r"(已|已经)(发送|发出|创建|建立|预订|预定|下单|取消|保存|提交|添加|更新|安排|回复|转发|记录|完成|退款)|(发送|创建|预订|下单|提交|保存)(成功|完毕)")
_EN_NEGATION = re.compile(
    r"\b(not|never|no|nothing|none|neither|nor|unable|cannot|can't|couldn't|wasn't|weren't|isn't|aren't|hasn't|haven't|didn't|"
    r"won't|failed|without|will|would|should|shall|can|could|to be|if|whether|before)\b|n't\b",
    re.IGNORECASE,
)
_ZH_NEGATION_BEFORE = re.compile(r"(未|没有|没|无法|不能|不|尚未|还没)")
_ZH_NEGATION_AFTER = re.compile(r"^.{0,3}(失败|不了)")
_CLAUSE = re.compile(r"[.!?;:\n。！？；，,]")


def _clause_before(answer: str, start: int) -> str:
    head = answer[:start]
    cut = max((m.end() for m in _CLAUSE.finditer(head)), default=0)
    return head[cut:]


def find_claim(answer: str | None) -> str | None:
    """The first un-negated claim of a side effect in ``answer`` (the clause text), or ``None``."""
    if not answer:
        return None
    for match in _EN.finditer(answer):
        if not _EN_NEGATION.search(_clause_before(answer, match.start())):
            return (_clause_before(answer, match.start()) + match.group(0)).strip()
    for match in _ZH.finditer(answer):
        before = _clause_before(answer, match.start())[-4:]
        after = answer[match.end() : match.end() + 6]
        if not _ZH_NEGATION_BEFORE.search(before) and not _ZH_NEGATION_AFTER.search(after):
            return match.group(0)
    return None
