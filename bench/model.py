"""The embedded model's speed, and what the main job costs per harness.

    python -m bench.model [--smoke] [--harness all] [--tasks default] [--repeats-speed 3]
                          [--json F] [--markdown F]

Two parts, on this machine:

1. **Engine speed**, in this process, with the build, model and threads the embedded server
   uses (llama-cpp-python, the bundled SmolLM2-135M Q4_1, ``n_ctx`` 4096): prompt
   evaluation in tokens/s for a cold prompt of 512 and 1,536 tokens (the size of a first
   request with tools), and generation in tokens/s (greedy, 128 tokens, end of text
   banned so every run generates the same number). Each figure is the median of
   ``--repeats-speed`` runs.
2. **The main job**: ``probegate run --harness HARNESS --tasks TASKS`` as the README runs it
   (the embedded server with its default chat handler and shims), in a temporary store;
   per harness: attempts, wall time, seconds per attempt, model calls, prompt and
   completion tokens per attempt (from each run's ``summary.json`` and ``timing.json``).

``--smoke`` checks that both parts run (32- and 64-token prompts, 16 tokens generated,
one ``fc`` attempt of one P0 task). Seconds are this machine's, under its load at the
time: the output records the CPU, the core count and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.procs import loadavg, machine, machine_line
from bench.report import add_output_options, emit

SPEED_PROMPTS = (512, 1536)
GENERATED = 128
SMOKE_TASK = "p0-order-status-5003"


def _filler(n_tokens: int, llm: Any, salt: int) -> list[int]:
    """``n_tokens`` tokens of English text that start differently for each ``salt`` (no KV reuse)."""
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    tokens = llm.tokenize(f"Note {salt}: {text}".encode(), add_bos=False)
    while len(tokens) < n_tokens:
        tokens += tokens
    return tokens[:n_tokens]


def engine_speed(prompts: tuple[int, ...], generated: int, repeats: int) -> dict[str, Any]:
    """Prompt and generation tokens/s of the embedded model in this process (median of ``repeats``)."""
    import numpy as np
    from llama_cpp import Llama

    from probegate.runner.embedded import default_model_path, embedded_threads

    threads = embedded_threads()
    llm = Llama(model_path=str(default_model_path()), n_ctx=4096, n_threads=threads, n_threads_batch=threads,
                verbose=False, seed=1234)
    out: dict[str, Any] = {"threads": threads, "n_ctx": 4096, "model": default_model_path().name, "prompt": {}}
    llm.eval(_filler(64, llm, 0))  # warm-up: the first evaluation allocates the compute graph
    salt = 0
    for n in prompts:
        rates = []
        for _ in range(repeats):
            salt += 1
            tokens = _filler(n, llm, salt)
            llm.reset()
            t0 = time.perf_counter()
            llm.eval(tokens)
            rates.append(n / (time.perf_counter() - t0))
        out["prompt"][str(n)] = {"tokens_per_s": round(statistics.median(rates), 1), "runs": [round(r, 1) for r in rates]}
    eos = {llm.token_eos(), *(t for t in (llm.tokenize(b"<|im_end|>", add_bos=False, special=True)) if t >= 0)}

    def no_end(_ids: Any, logits: Any) -> Any:
        logits[list(eos)] = -np.inf
        return logits

    rates = []
    for _ in range(repeats):
        salt += 1
        prompt = _filler(32, llm, salt)
        llm.reset()
        llm.eval(prompt)
        count, t0 = 0, time.perf_counter()
        for _token in llm.generate(prompt, temp=0.0, reset=False, logits_processor=[no_end]):
            count += 1
            if count >= generated:
                break
        rates.append(count / (time.perf_counter() - t0))
    out["generation"] = {"tokens": generated, "tokens_per_s": round(statistics.median(rates), 1),
                         "runs": [round(r, 1) for r in rates]}
    return out


def main_job(harness: str, tasks: str | None, max_steps: int | None = None) -> dict[str, Any]:
    """Run the main job in a temporary store; seconds and tokens per attempt per harness."""
    from probegate.harnesses.registry import expand_harnesses
    from probegate.runner.embedded import embedded_shims
    from probegate.runner.execute import RunConfig, execute_many

    names, notes = expand_harnesses(harness)
    with tempfile.TemporaryDirectory() as tmp:
        config = RunConfig(task_set="default", harness=harness, store=f"sqlite:///{Path(tmp) / 'bench.db'}",
                           output_dir=Path(tmp) / "runs", compat=embedded_shims(None), max_steps=max_steps,
                           task_ids=tuple(t for t in (tasks or "").split(",") if t), run_id="bench-model",
                           task_timeout=900.0)
        t0 = time.perf_counter()
        reports = execute_many(config, names)
        total_s = time.perf_counter() - t0
        rows = []
        for report in reports:
            folder = config.output_dir / report.run_id
            summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
            timing = json.loads((folder / "timing.json").read_text(encoding="utf-8"))
            attempts = summary["headline"]["attempts"]
            cost = summary["cost"]["mean"]
            rows.append({
                "harness": summary["run"]["harness"], "attempts": attempts, "wall_min": timing["wall_min"],
                "s_per_attempt": round(timing["wall_min"] * 60 / attempts, 1) if attempts else None,
                "model_latency_s_per_attempt": round(timing["latency_ms"]["mean"] / 1000, 1),
                "model_calls": cost.get("model_calls"), "prompt_tokens": cost.get("prompt_tokens"),
                "completion_tokens": cost.get("completion_tokens"), "status": report.status,
            })
    return {"harness": harness, "tasks": tasks or "default", "notes": notes, "total_min": round(total_s / 60, 1),
            "runs": rows}


def markdown(data: dict[str, Any]) -> str:
    """The result as Markdown tables."""
    speed = data["speed"]
    lines = [machine_line(data["machine"]), f"Load average before / after: {data['load_before']} / {data['load_after']}", "",
             f"Engine ({speed['model']}, {speed['threads']} threads, n_ctx {speed['n_ctx']}):", "",
             "| figure | tokens/s (median) | runs |", "|---|---|---|"]
    for n, p in speed["prompt"].items():
        lines.append(f"| prompt evaluation, cold {n} tokens | {p['tokens_per_s']:.0f} | {', '.join(map(str, p['runs']))} |")
    g = speed["generation"]
    lines.append(f"| generation, {g['tokens']} tokens greedy | {g['tokens_per_s']:.0f} | {', '.join(map(str, g['runs']))} |")
    job = data.get("main_job")
    if job:
        lines += ["", f"Main job (`--harness {job['harness']} --tasks {job['tasks']}`): {job['total_min']} min in all", "",
                  "| harness | attempts | wall min | s / attempt | model s / attempt | model calls | tokens in | tokens out |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in job["runs"]:
            lines.append(f"| {r['harness']} | {r['attempts']} | {r['wall_min']} | {r['s_per_attempt']} | "
                         f"{r['model_latency_s_per_attempt']} | {r['model_calls']} | {r['prompt_tokens']} | "
                         f"{r['completion_tokens']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes and one fc attempt, to check the bench runs")
    parser.add_argument("--harness", default="all", help="harnesses of the main job part (default: all)")
    parser.add_argument("--tasks", default=None, help="--tasks of the main job part (default: the default subset)")
    parser.add_argument("--no-main-job", action="store_true", help="measure the engine only")
    parser.add_argument("--repeats-speed", type=int, default=3, help="runs per engine figure (median reported)")
    add_output_options(parser)
    args = parser.parse_args()
    data: dict[str, Any] = {"machine": machine(), "load_before": loadavg(), "cpus": os.cpu_count()}
    if args.smoke:
        data["speed"] = engine_speed((32, 64), 16, 1)
        data["main_job"] = main_job("fc", SMOKE_TASK, max_steps=1)
    else:
        data["speed"] = engine_speed(SPEED_PROMPTS, GENERATED, args.repeats_speed)
        if not args.no_main_job:
            data["main_job"] = main_job(args.harness, args.tasks)
    data["load_after"] = loadavg()
    emit(args, data, markdown(data))


if __name__ == "__main__":
    main()
