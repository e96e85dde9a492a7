"""``probegate export`` / ``probegate import`` as a user runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from probegate.store import CaptureWriter, Exchange, Run, open_store

CLI = [sys.executable, "-m", "probegate"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def test_export_then_import(tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'a.db'}"
    writer = CaptureWriter(open_store(source)).start()
    writer.submit_blocking(Run(id="r9", task_set="default"))
    writer.submit_blocking(Exchange(run_id="r9", task_id="t", response_raw=b"\x00\x01"))
    writer.close()
    bundle = tmp_path / "r9.jsonl.gz"
    out = _cli("export", "r9", "-o", str(bundle), "--store", source)
    assert out.returncode == 0 and "exported run r9" in out.stdout
    target = f"sqlite:///{tmp_path / 'b.db'}"
    assert _cli("import", str(bundle), "--store", target).returncode == 0
    again = _cli("import", str(bundle), "--store", target)
    assert again.returncode == 2 and "already holds run 'r9'" in again.stderr and "Traceback" not in again.stderr
    renamed = _cli("import", str(bundle), "--store", target, "--as", "r9b")
    assert renamed.returncode == 0 and "imported run r9b" in renamed.stdout
    bad_name = _cli("import", str(bundle), "--store", target, "--as", "no/slash")
    assert bad_name.returncode == 2 and "not usable as a run id" in bad_name.stderr
    missing = _cli("export", "nope", "-o", str(tmp_path / "n.gz"), "--store", source)
    assert missing.returncode == 2 and "nothing is recorded" in missing.stderr
