"""Summarise a py-spy ``--format raw`` profile: share of samples per thread, per leaf
frame and per frame anywhere on the stack.

    python -m bench.pyspy PROFILE.txt [--top N] [--thread NAME]

``bench.gateway --py-spy DIR`` writes ``DIR/probegate.txt`` in that format (collapsed
stacks: ``frame;frame;... count`` per line, the thread first with ``--threads``).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

_LINE_NO = re.compile(r":\d+\)")


@dataclass
class Summary:
    """Sample counts of one profile."""

    total: int = 0
    threads: Counter[str] = field(default_factory=Counter)
    leaves: Counter[str] = field(default_factory=Counter)
    inclusive: Counter[str] = field(default_factory=Counter)

    def share(self, count: int) -> float:
        """``count`` as a fraction of all samples."""
        return count / self.total if self.total else 0.0


def summarise(lines: list[str], thread: str | None = None) -> Summary:
    """Count the samples of collapsed stacks (``a;b;c 12``); ``thread`` keeps only stacks
    whose first frame contains it. Inclusive counts ignore line numbers and count a
    frame once per stack."""
    out = Summary()
    for line in lines:
        stack, _, count = line.strip().rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        if thread is not None and thread not in frames[0]:
            continue
        n = int(count)
        out.total += n
        out.threads[frames[0]] += n
        out.leaves[frames[-1]] += n
        for name in {_LINE_NO.sub(")", f) for f in frames}:
            out.inclusive[name] += n
    return out


def render(summary: Summary, top: int = 25) -> str:
    """The summary as text: threads, then leaf frames, then inclusive frames."""
    lines = [f"{summary.total} samples"]
    for title, counter in (("threads", summary.threads), ("leaf frames", summary.leaves),
                           ("frames anywhere on the stack", summary.inclusive)):
        lines.append(f"-- {title}")
        lines += [f"{summary.share(n):6.1%}  {name}" for name, n in counter.most_common(top)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--thread", help="only stacks of threads whose name contains this")
    args = parser.parse_args()
    print(render(summarise(args.profile.read_text().splitlines(), args.thread), args.top))


if __name__ == "__main__":
    main()
