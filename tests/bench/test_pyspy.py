"""Summarising py-spy's collapsed stacks (pure)."""

from __future__ import annotations

from bench.pyspy import render, summarise

PROFILE = [
    "thread (1): MainThread;run (a.py:1);send (b.py:10) 6",
    "thread (1): MainThread;run (a.py:1);send (b.py:12) 2",
    "thread (2): writer;loop (w.py:5);commit (w.py:9) 2",
    "",
    "garbage line",
]


def test_counts_per_thread_leaf_and_frame() -> None:
    s = summarise(PROFILE)
    assert s.total == 10
    assert s.threads["thread (1): MainThread"] == 8
    assert s.leaves["send (b.py:10)"] == 6
    assert s.inclusive["send (b.py)"] == 8  # line numbers folded
    assert s.share(s.inclusive["run (a.py)"]) == 0.8


def test_thread_filter_and_render() -> None:
    s = summarise(PROFILE, thread="writer")
    assert s.total == 2 and list(s.threads) == ["thread (2): writer"]
    assert "100.0%  commit (w.py:9)" in render(s)
