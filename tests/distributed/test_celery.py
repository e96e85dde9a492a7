"""Distributed runs end to end on loopback: Redis at 127.0.0.1:6379, the PostgreSQL store,
``probegate worker`` processes and a scripted model.

Each test has its own queue (and Redis database ``REDIS_DB``), so tests never take
each other's jobs; every worker a test starts is stopped when it ends.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from sqlmodel import Session, select

from bench.distributed import MODEL, TASKS, busy_seconds, purge_queue, scripted_model, stock_agent, workers
from probegate.runner.claims import claims
from probegate.runner.execute import RunConfig, execute
from probegate.store import Exchange, open_store
from probegate.testing import ScriptedUpstream, serve_in_thread

pytestmark = pytest.mark.postgres

REDIS_DB = 7
BROKER = os.environ.get("PROBEGATE_TEST_BROKER", f"redis://127.0.0.1:6379/{REDIS_DB}")


@pytest.fixture
def queue() -> Iterator[str]:
    """A queue name no other test uses; emptied afterwards."""
    try:
        redis.Redis.from_url(BROKER, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        pytest.fail(f"these tests need the Redis server at {BROKER}: {exc}")
    name = f"test-{uuid.uuid4().hex[:10]}"
    yield name
    purge_queue(BROKER, name)


def _config(store: str, model_url: str, tmp_path: Path, run_id: str, **kw: object) -> RunConfig:
    return RunConfig(task_set=str(TASKS), harness="fc", model=MODEL, model_endpoint=model_url, store=store,
                     run_id=run_id, output_dir=tmp_path, task_timeout=60, **kw)  # type: ignore[arg-type]


def _summary(tmp_path: Path, run_id: str) -> dict:
    summary = json.loads((tmp_path / run_id / "summary.json").read_text())
    summary["run"].pop("id")
    return summary


def test_a_distributed_run_gives_the_summary_a_local_run_gives(pg_url: str, queue: str, tmp_path: Path) -> None:
    with scripted_model(0.0) as model:
        local = execute(_config(pg_url, model.url, tmp_path, "local-run", repeats=2, concurrency=2))
        with workers(3, BROKER, pg_url, queue, log_dir=tmp_path):
            remote = execute(_config(pg_url, model.url, tmp_path, "celery-run", repeats=2, executor="celery",
                                     broker=BROKER, queue=queue))
    assert (local.status, remote.status) == ("done", "done")
    assert sorted((o.key, o.result.stop, o.passed) for o in remote.outcomes) == sorted(
        (o.key, o.result.stop, o.passed) for o in local.outcomes)
    assert len(remote.outcomes) == 6 and all(o.passed for o in remote.outcomes)
    assert _summary(tmp_path, "celery-run") == _summary(tmp_path, "local-run")
    engine = open_store(pg_url)
    rows = claims(engine, "celery-run")
    engine.dispose()
    assert len(rows) == 6 and {r.status for r in rows} == {"done"}
    assert len({r.worker for r in rows}) >= 2  # the attempts really were spread over the workers


def _running_with_exchange(pg_url: str, run_id: str, pids: set[int], deadline: float) -> tuple[int, str, int]:
    """A worker pid with an attempt in flight that has already stored an exchange."""
    engine = open_store(pg_url)
    try:
        while time.monotonic() < deadline:
            for row in claims(engine, run_id):
                pid = int((row.worker or "probegate-0@").split("-", 1)[1].split("@")[0])
                if row.status != "running" or pid not in pids:
                    continue
                with Session(engine) as session:
                    seen = session.exec(select(Exchange.id).where(
                        Exchange.run_id == run_id, Exchange.task_id == row.task_id,
                        Exchange.attempt == row.attempt)).first()
                if seen is not None:
                    return pid, row.task_id, row.attempt
            time.sleep(0.1)
    finally:
        engine.dispose()
    raise AssertionError("no attempt got under way")


def test_a_worker_killed_mid_attempt_still_gives_every_attempt_scored_once(
    pg_url: str, queue: str, tmp_path: Path
) -> None:
    import threading

    run_id = "killed-run"
    result: dict[str, object] = {}
    open_store(pg_url).dispose()  # migrated here, not by two threads at once
    with scripted_model(0.7) as model, workers(3, BROKER, pg_url, queue, log_dir=tmp_path,
                                               visibility_timeout=30) as procs:
        config = _config(pg_url, model.url, tmp_path, run_id, repeats=2, executor="celery", broker=BROKER,
                         queue=queue)
        coordinator = threading.Thread(target=lambda: result.update(report=execute(config)), daemon=True)
        coordinator.start()
        pid, task_id, attempt = _running_with_exchange(pg_url, run_id, {p.pid for p in procs},
                                                       time.monotonic() + 120)
        os.kill(pid, signal.SIGKILL)
        coordinator.join(240)
        assert not coordinator.is_alive(), "the run did not end after a worker was killed"
    report = result["report"]
    assert report.status == "done"  # type: ignore[attr-defined]
    assert sorted(o.key for o in report.outcomes) == sorted(  # type: ignore[attr-defined]
        f"{t}/{a}" for t in ("stock-a", "stock-b", "stock-c") for a in (0, 1))
    engine = open_store(pg_url)
    by_key = {(r.task_id, r.attempt): r for r in claims(engine, run_id)}
    with Session(engine) as session:
        lost = list(session.exec(select(Exchange).where(
            Exchange.run_id == run_id, Exchange.task_id == task_id, Exchange.attempt == attempt)))
    engine.dispose()
    killed = by_key[(task_id, attempt)]
    assert killed.generation == 2 and killed.status == "done" and str(pid) not in (killed.worker or "")
    assert any(e.superseded for e in lost) and sum(not e.superseded for e in lost) == 3
    summary = _summary(tmp_path, run_id)
    assert summary["headline"]["attempts"] == 6 and summary["headline"]["passed"] == 6
    assert summary["cost"]["mean"]["model_calls"] == 3  # the lost delivery's calls are not counted


def test_more_workers_finish_a_model_bound_load_sooner(pg_url: str, queue: str, tmp_path: Path) -> None:
    seconds = {}
    with scripted_model(0.6) as model:
        for n in (1, 2):
            run_id = f"speed-{n}"
            with workers(n, BROKER, pg_url, f"{queue}-{n}", log_dir=tmp_path):
                report = execute(_config(pg_url, model.url, tmp_path, run_id, repeats=2, executor="celery",
                                         broker=BROKER, queue=f"{queue}-{n}"))
            assert report.status == "done" and len(report.outcomes) == 6
            seconds[n] = busy_seconds(pg_url, run_id)
    # 6 attempts x 3 model calls x 0.6 s: about 11 s on one worker, about half on two;
    # a generous bound, so a busy machine does not fail it
    assert seconds[2] < 0.8 * seconds[1], seconds


def test_each_worker_drives_its_own_model_server(pg_url: str, queue: str, tmp_path: Path) -> None:
    scripts = [ScriptedUpstream(handler=stock_agent(0.3)) for _ in range(2)]
    servers = [serve_in_thread(script) for script in scripts]
    logs = [tmp_path / "w1", tmp_path / "w2"]
    for log in logs:
        log.mkdir()
    try:
        with workers(1, BROKER, pg_url, queue, log_dir=logs[0], model_endpoint=servers[0].url), \
                workers(1, BROKER, pg_url, queue, log_dir=logs[1], model_endpoint=servers[1].url):
            # the coordinator names no model server: the workers bring theirs
            report = execute(RunConfig(task_set=str(TASKS), harness="fc", model=MODEL, store=pg_url,
                                       run_id="own-models", output_dir=tmp_path, task_timeout=60, repeats=2,
                                       executor="celery", broker=BROKER, queue=queue))
    finally:
        for server in servers:
            server.stop()
    served = [len(script.requests) for script in scripts]
    assert report.status == "done" and len(report.outcomes) == 6 and all(o.passed for o in report.outcomes)
    assert sum(served) == 18 and min(served) > 0, served


def test_a_job_that_keeps_failing_is_recorded_as_an_error_not_retried_forever(
    pg_url: str, queue: str, tmp_path: Path
) -> None:
    from probegate.runner.executors.celery import JOB_RETRIES, TASK_NAME, make_app
    from probegate.runner.runs import create_run
    from probegate.runner.worker import AttemptJob

    engine = open_store(pg_url)
    create_run(engine, "failing", task_set="x", harness="fc", model=MODEL, upstream=None, params={"outcomes": {}})
    job = AttemptJob(run_id="failing", task_id="stock-a", attempt=0, task_set=str(tmp_path / "no-such-set"),
                     harness="fc", model=MODEL, upstream="http://127.0.0.1:9")
    app = make_app(BROKER)
    app.send_task(TASK_NAME, args=[job.to_json()], queue=queue)
    app.close()
    rows = []
    with workers(1, BROKER, pg_url, queue, log_dir=tmp_path):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (rows and rows[0].status == "error"):
            time.sleep(0.5)
            rows = claims(engine, "failing")
    engine.dispose()
    assert len(rows) == 1 and rows[0].status == "error", rows
    assert f"failed {JOB_RETRIES + 1} times" in rows[0].outcome["error"] and "TaskSetError" in rows[0].outcome["error"]


def test_the_benchmark_runs(tmp_path: Path, queue: str) -> None:
    from bench.distributed import main

    out = tmp_path / "bench.json"
    assert main(["--workers", "1", "--attempts", "3", "--latency-ms", "50", "--broker", BROKER,
                 "--out", str(tmp_path), "--json", str(out), "--ingest", "2"]) == 0
    data = json.loads(out.read_text())
    (result,) = data["results"]
    assert (result["workers"], result["attempts"], result["passed"], result["rows_per_attempt"]) == (1, 3, 3, 7.0)
    assert data["ingest"]["2"]["rows_per_s"] > 0
