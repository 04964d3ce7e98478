"""The speed model's predictions beside published serving-speed measurements.

Each row is one published run (bench/_speed_published.py, with its source). The engine is given
what the person running the benchmark chose (GPU, model, precisions, tensor parallelism, prompt
and output lengths, batch or concurrency) and predicts per-stream decode tokens/s, aggregate
output tokens/s and the mean time to first token. Per row it prints prediction, measurement and
their ratio, and whether the row is within tolerance: decode (per stream and aggregate) within
±25 %, TTFT within 2x. Rows marked "fit" supplied a constant of planner/capacity/speed_model.py;
the summary counts the check rows (target: at least 80 % within). The roofline bound is printed
beside the per-stream prediction.

Run: `.venv/bin/python bench/serving_speed.py` (pure Python, a second or two).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._speed_published import RUNS, Run
from planner.capacity import ServingEstimate, ServingInputs, estimate_serving
from planner.capacity.speed_model import FIRST_TOKEN_FIXED_S, device_class

DECODE_TOLERANCE = 0.25
TTFT_FACTOR = 2.0
TARGET_SHARE = 0.8


@dataclass(frozen=True)
class Comparison:
    metric: str  # "per-stream", "aggregate", "ttft"
    predicted: float
    measured: float
    bound: float | None = None

    @property
    def ratio(self) -> float:
        return self.predicted / self.measured

    @property
    def within(self) -> bool:
        if self.metric == "ttft":
            return 1 / TTFT_FACTOR <= self.ratio <= TTFT_FACTOR
        return abs(self.ratio - 1) <= DECODE_TOLERANCE


def _estimate(
    run: Run, *, batch: int, prompt: int, arrivals: float | None = None, burst: int | None = None
) -> ServingEstimate:
    return estimate_serving(
        ServingInputs(
            accelerator=run.accelerator,
            model=run.model,
            model_gb=run.model_gb,
            params_b=run.model.params_b if run.model_gb else None,
            weight_precision=run.precision,
            kv_precision=run.kv_precision,
            tensor_parallel=run.tp,
            context_tokens=max(prompt + run.output, 1),
            users=batch,
            decode_batch=batch,
            prompt_tokens=max(prompt, 1),
            output_tokens=run.output,
            arrival_rate_per_s=arrivals,
            burst_arrivals=burst,
            overhead_gb=1,
        )
    )


def _closed_loop(run: Run) -> ServingEstimate:
    """A closed loop of `batch` clients: a new request arrives when one ends, so the arrival rate
    λ solves λ = batch ÷ (TTFT(λ) + output ÷ per-stream rate(λ)); bisection between no arrivals
    and the rate whose prefills would fill the GPUs' time."""
    low, high = 0.0, None
    est = _estimate(run, batch=run.batch, prompt=run.prompt)
    for _ in range(40):
        rate = (low + high) / 2 if high is not None else max(2 * low, 0.01)
        trial = _estimate(run, batch=run.batch, prompt=run.prompt, arrivals=rate)
        if trial.decode_tokens_per_s is None or trial.time_to_first_token_ms is None:
            high = rate
            continue
        request_s = trial.time_to_first_token_ms / 1000 + run.output / trial.decode_tokens_per_s
        if rate < run.batch / request_s:
            low, est = rate, trial
        else:
            high = rate
    return est


def _static(run: Run, decode: ServingEstimate) -> tuple[float | None, float | None]:
    """(aggregate, first token ms) of a static batch: one batched prefill of the batch's prompts
    (a burst: every first token comes at its end), then output steps; aggregate = batch x output
    ÷ (prefill + output x step)."""
    prefill = _estimate(run, batch=1, prompt=run.prompt, burst=run.batch)
    if decode.decode_tokens_per_s is None or prefill.time_to_first_token_ms is None:
        return None, None
    prefill_s = Fraction(str(prefill.time_to_first_token_ms)) / 1000 - FIRST_TOKEN_FIXED_S
    total = prefill_s + Fraction(run.output) / Fraction(str(decode.decode_tokens_per_s))
    return float(run.batch * run.output / total), prefill.time_to_first_token_ms


def compare(run: Run) -> list[Comparison]:
    """The run's measured figures beside the engine's predictions."""
    if run.mode == "closed":
        est = _closed_loop(run)
    else:
        prompt = 0 if run.mode == "ubatch" else run.prompt
        est = _estimate(run, batch=run.batch, prompt=prompt)
    out = []
    alone = est
    if run.burst_start:
        alone = _estimate(run, batch=run.batch, prompt=run.prompt, burst=run.batch)
    if run.per_stream is not None and alone.decode_tokens_per_s is not None:
        out.append(
            Comparison(
                "per-stream",
                alone.decode_tokens_per_s,
                run.per_stream,
                alone.decode_tokens_per_s_upper_bound,
            )
        )
    aggregate, ttft = est.aggregate_tokens_per_s, alone.time_to_first_token_ms
    if run.mode == "static":
        aggregate, ttft = _static(run, est)
    if run.aggregate is not None and aggregate is not None:
        out.append(Comparison("aggregate", aggregate, run.aggregate))
    if run.ttft_ms is not None and ttft is not None:
        out.append(Comparison("ttft", ttft, run.ttft_ms))
    return out


# Hardware families, by the speed model's device class: each has its own fitted constants.
FAMILIES: dict[str, str] = {
    "gpu": "NVIDIA GPUs",
    "amd-gpu": "AMD Instinct MI300X",
    "cpu-amx": "Intel Xeon 6 CPUs (AMX)",
    "tpu": "Google TPU v5e",
}


def family(run: Run) -> str:
    return device_class(run.accelerator)


def check_share(role: str = "check", of: str | None = None) -> tuple[int, int]:
    """(comparisons within tolerance, comparisons) over the rows of `role` (of one family)."""
    results = [
        c
        for run in RUNS
        if run.role == role and (of is None or family(run) == of)
        for c in compare(run)
    ]
    return sum(c.within for c in results), len(results)


def _table(runs: list[Run]) -> None:
    print(
        "| run | role | GPUs | batch | in/out | metric | predicted | measured | ratio | roofline bound | within |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        comparisons = compare(run)
        if not comparisons:
            print(f"| {run.label} | {run.role} | – | – | – | no prediction | – | – | – | – | no |")
        for c in comparisons:
            bound = f"{c.bound:,.1f}" if c.bound is not None else "–"
            print(
                f"| {run.label} | {run.role} | {run.tp} × {run.accelerator.id} | {run.batch} | "
                f"{run.prompt}/{run.output} | {c.metric} | {c.predicted:,.1f} | {c.measured:,.1f} | "
                f"{c.ratio:.2f} | {bound} | {'yes' if c.within else 'no'} |"
            )


def main() -> None:
    for key, name in FAMILIES.items():
        runs = [r for r in RUNS if family(r) == key]
        print(f"\n### {name}\n")
        for role in ("fit", "check"):
            hits, total = check_share(role, key)
            share = f"{hits / total:.0%}" if total else "–"
            print(f"{role} rows: {hits} of {total} comparisons within tolerance ({share}).  ")
        print()
        _table(runs)
    print("\n### All families\n")
    for role in ("fit", "check"):
        hits, total = check_share(role)
        print(f"{role} rows: {hits} of {total} comparisons within tolerance ({hits / total:.0%}).")
    for metric in ("per-stream", "aggregate", "ttft"):
        rows = [c for r in RUNS if r.role == "check" for c in compare(r) if c.metric == metric]
        print(f"- check {metric}: {sum(c.within for c in rows)} of {len(rows)}")
    print(f"\nTarget: at least {TARGET_SHARE:.0%} of check comparisons within tolerance.")
    print("\nSources:")
    for source in dict.fromkeys(r.source for r in RUNS):
        print(f"- {source}")


if __name__ == "__main__":
    main()
