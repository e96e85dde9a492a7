"""No secret in any stored field: secrets sent through every route never reach a table,
an export bundle or an output file (both stores; a real gateway, ScriptedUpstream,
the openai SDK, the probes' REST door, the mitmproxy intercept door, the runner's Run
writes, the CLI).

Every secret below holds the word ``SECRET`` in a place no redaction mark or split
leaves whole, so one search for it finds any piece of any of them that survived.
"""

from __future__ import annotations

import gzip
import json
import ssl
import subprocess
import sys
import warnings
from pathlib import Path

import httpx
import pytest
from openai import OpenAI
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

with warnings.catch_warnings():  # mitmproxy's default addons import ldap3 -> pyasn1 (a DeprecationWarning)
    warnings.simplefilter("ignore", DeprecationWarning)
    import mitmproxy.addons.proxyauth  # noqa: F401

from probegate.cli import app
from probegate.probes.intercept import HttpBackend, InterceptProxy
from probegate.redact import MARK
from probegate.runner.runs import create_run, update_run
from probegate.store.models import Exchange, ProbeCall
from probegate.testing import Reply, chat_chunk, chat_completion
from tests.scorer.rowkit import TASKS_DIR

RUN, TASK = "sec1", "email-jonas"
KEY = "sk-proj-SECRETabcdefghijklmnop"  # pattern-shaped: found anywhere
ESCAPED_KEY = KEY.replace("-", "\\u002d")  # as a JSON string may carry it
GOOGLE = "goog-SECRET-0001"  # not pattern-shaped: only its header name gives it away
TOKEN = "tok-SECRET-0002"
ORG = "org-SECRET-0003"
QUERY_KEY = "q-SECRET-0004"
MAIL = "mia.hansen@leakcorp.example"  # PII: only with --redact-pii
NEEDLES = ("SECRET", "leakcorp")
MAPPING = Path(__file__).resolve().parents[2] / "probes" / "mappings" / "example.yaml"

runner = CliRunner()


def _stream_events() -> list[dict[str, object]]:
    # the key and the e-mail address are split across deltas; no delta holds either whole
    pieces = ["Your key is sk-proj-SEC", "RETabcdef", "ghijklmnop; write to mia.han", "sen@leakc", "orp.example."]
    chunks = [chat_chunk({"role": "assistant", "content": ""})]
    chunks += [chat_chunk({"content": piece}) for piece in pieces]
    return chunks + [chat_chunk({}, finish_reason="stop")]


def _every_table(engine: Engine) -> dict[str, list[str]]:
    """Every value of every row of every table, as text (bytes decoded as latin-1)."""
    found: dict[str, list[str]] = {}
    with engine.connect() as conn:
        for table in inspect(conn).get_table_names():
            values = []
            for row in conn.execute(text(f'SELECT * FROM "{table}"')):
                for value in row:
                    if isinstance(value, (bytes, memoryview)):
                        values.append(bytes(value).decode("latin-1"))
                    else:
                        values.append(json.dumps(value, default=str, ensure_ascii=False))
            found[table] = values
    return found


def _leaks(where: str, content: str) -> list[str]:
    return [f"{where}: {needle!r}" for needle in NEEDLES if needle in content]


@pytest.mark.timeout(240)
def test_no_secret_in_any_stored_field(upstream, gateway_factory, engine: Engine, store_url: str, tmp_path: Path) -> None:
    script, server = upstream
    gw = gateway_factory(server.url, redact_pii=True)
    base = gw.base(RUN, TASK)

    # 1. gateway, JSON: secrets in headers, query string, an escaped body and the answer
    script.push(Reply.json(chat_completion(f"Use {KEY} and write to {MAIL}.")))
    body = ('{"model": "m", "messages": [{"role": "user", "content": "my key is %s, mail %s"}]}'
            % (ESCAPED_KEY, MAIL)).encode()
    headers = {"authorization": f"Bearer {KEY}", "x-goog-api-key": GOOGLE, "x-auth-token": TOKEN,
               "openai-organization": ORG, "content-type": "application/json"}
    answer = httpx.post(f"{base}/chat/completions", params={"key": QUERY_KEY, "api-version": "1"},
                        content=body, headers=headers, timeout=30)
    assert answer.status_code == 200 and KEY in answer.text  # the client sees the original

    # 2. gateway, SSE through the openai SDK: key and e-mail split across deltas
    script.push(Reply.sse(_stream_events()))
    client = OpenAI(base_url=base, api_key=KEY, default_headers={"x-goog-api-key": GOOGLE},
                    default_query={"key": QUERY_KEY}, max_retries=0)
    streamed = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
    text_seen = "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
    assert KEY in text_seen and MAIL in text_seen

    # the upstream saw every original byte: redaction is for what is stored only
    first, second = script.requests[0], script.requests[1]
    assert first.headers["x-goog-api-key"] == GOOGLE and first.headers["authorization"] == f"Bearer {KEY}"
    assert ESCAPED_KEY.encode() in first.body and f"key={QUERY_KEY}" in first.query
    assert second.headers["authorization"] == f"Bearer {KEY}"

    # 3. probes REST door: args, raw args (escaped), result, world state
    raw_args = ('{"to": "%s", "subject": "key %s", "body": "again %s"}' % (MAIL, KEY, ESCAPED_KEY)).encode()
    called = httpx.post(f"{gw.url}/r/{RUN}/{TASK}/0/tools/send_email", content=raw_args,
                        headers={"x-auth-token": TOKEN}, timeout=30)
    assert called.status_code == 200 and called.json()["to"] == MAIL

    # 4. the intercept proxy (HTTPS to a mapped host): the agent's own API credential and body
    proxy = InterceptProxy(MAPPING, HttpBackend(gw.url), port=0, confdir=tmp_path / "mitm").start()
    try:
        verify = ssl.create_default_context(cafile=str(proxy.ca_path))
        with httpx.Client(proxy=proxy.proxy_url(RUN, TASK, 0), verify=verify, timeout=60, trust_env=False) as mitm:
            sent = mitm.post("https://api.mail.example/v1/messages", headers={"authorization": f"Bearer {KEY}"},
                             content=('{"to": "%s", "subject": "s", "body": "%s"}' % (MAIL, ESCAPED_KEY)).encode())
    finally:
        proxy.stop()
    assert sent.status_code == 200 and sent.json()["to"] == MAIL

    # 5. the runner's Run row: upstream URL and the final answer kept in params
    create_run(engine, RUN, task_set=str(TASKS_DIR), harness="fc", model="m",
               upstream=f"http://127.0.0.1:1/v1?key={QUERY_KEY}", params={"outcomes": {}})
    update_run(engine, RUN, params={"outcomes": {f"{TASK}/0": {"final_answer": f"Done. The key was {KEY}."}}})
    gw.flush()

    # every table of the store
    tables = _every_table(engine)
    assert {"run", "exchange", "probecall", "worldstate"} <= set(tables)
    leaks = [leak for table, values in tables.items() for v in values for leak in _leaks(table, v)]
    assert not leaks, leaks
    assert sum(MARK in v for v in tables["exchange"]) >= 6  # the marks stand where the secrets were

    from sqlmodel import Session, select

    with Session(engine) as session:
        exchanges = session.exec(select(Exchange).order_by(Exchange.seq)).all()
        calls = session.exec(select(ProbeCall)).all()
    assert len(exchanges) == 2 and len(calls) == 2 and exchanges[1].stream
    assert sorted(c.via for c in calls) == ["direct", "mitm"]
    assert exchanges[0].request_headers["x-goog-api-key"] == MARK
    assert exchanges[0].request_headers["authorization"] == f"Bearer {MARK}"
    assert exchanges[1].completion["assistant"]["content"] == f"Your key is {MARK}; write to {MARK}."

    # an export bundle (in a child process: the command leaves its engine to exit)
    bundle = tmp_path / "sec1.jsonl.gz"
    done = subprocess.run([sys.executable, "-m", "probegate", "export", RUN, "-o", str(bundle), "--store", store_url],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    exported = gzip.decompress(bundle.read_bytes()).decode()
    assert '"kind":"exchange"' in exported and not _leaks("bundle", exported)

    # every output file of the scored run
    out = tmp_path / "runs"
    code = runner.invoke(app, ["report", RUN, "--task-set", str(TASKS_DIR), "--store", store_url, "--out", str(out)])
    assert code.exit_code == 0, code.output
    files = [p for p in (out / RUN).rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"summary.json", "scores.csv", "report.html", f"{TASK}-0.json"} <= names
    leaks = [leak for p in files for leak in _leaks(p.name, p.read_text(encoding="utf-8"))]
    assert not leaks, leaks
    trace = json.loads((out / RUN / "traces" / f"{TASK}-0.json").read_text())
    assert trace["trajectory"]["final_answer"] == f"Done. The key was {MARK}."
