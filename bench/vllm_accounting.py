"""The engine's KV pool and concurrency beside vLLM's own start-up reports.

Each row is one published vLLM start-up log (bench/_vllm_published.py, with its source). The engine
is given only what the person launching vLLM chose (GPU, model, precision, tensor parallelism,
gpu_memory_utilization, max_model_len), the vLLM generation that wrote the log (engine_profile:
planner/capacity/engine_profiles.py) and no overhead, so it uses its own accounting
(planner/capacity/overhead.py). Per row it prints the KV pool per GPU (GiB) and the tokens /
maximum concurrency, engine beside measured, with the relative error; the target is 5 % or 1 GiB
per GPU. Rows marked "fit" supplied a constant of the accounting (in-sample: the non-torch memory,
or a family's activation peak); the others are checks. A miss keeps its reason in its source.

Run: `.venv/bin/python bench/vllm_accounting.py` (pure Python, under a second).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._vllm_published import CAT, GIB, H100_LLMD, MEASUREMENTS, Measurement
from planner.capacity import Accelerator, ServingInputs, estimate_serving, model_from_config

CONFIGS = Path(__file__).resolve().parent.parent / "tests" / "planner" / "data" / "configs"


def engine_row(
    m: Measurement, max_num_seqs: int | None = None
) -> tuple[float, int | None, float | None]:
    est = estimate_serving(
        ServingInputs(
            accelerator=m.gpu if isinstance(m.gpu, Accelerator) else CAT.accelerator(m.gpu),
            model=m.model,
            weight_precision=m.precision,
            kv_precision="bf16",
            tensor_parallel=m.tp,
            gpu_memory_utilization=m.utilization,
            context_tokens=m.context,
            users=1,
            engine_profile=m.engine,
            max_num_seqs=max_num_seqs,
        )
    )
    pool = est.available_for_cache_bytes / m.tp / GIB
    tokens = est.kv_cache_tokens
    return pool, tokens, (tokens / m.context if tokens is not None else None)


def rel(engine: float, measured: float) -> float:
    return (engine - measured) / measured * 100


def main() -> None:
    print(
        "| run | role | engine | KV pool per GPU, engine (GiB) | measured (GiB) | error | tokens, engine | measured | max concurrency, engine | measured | within 5 % or 1 GiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    hits = 0
    for m in MEASUREMENTS:
        pool, tokens, conc = engine_row(m)
        ok = abs(rel(pool, m.pool_gib)) <= 5 or abs(pool - m.pool_gib) <= 1
        hits += ok
        measured_conc = f"{m.tokens / m.context:.2f}x" if m.tokens else "–"
        print(
            f"| {m.label} | {m.role} | {m.engine} | {pool:.2f} | {m.pool_gib:.2f} | {rel(pool, m.pool_gib):+.1f} % | "
            f"{tokens:,} | {f'{m.tokens:,}' if m.tokens else '–'} | {conc:.2f}x | {measured_conc} | {'yes' if ok else 'no'} |"
        )
    print(f"\n{hits} of {len(MEASUREMENTS)} within target.")
    what_ifs = [m for m in MEASUREMENTS if m.max_num_seqs_if is not None]
    if what_ifs:
        print("\nWhat-if (a launch flag the log does not show):")
    for m in what_ifs:
        pool, _, conc = engine_row(m, m.max_num_seqs_if)
        print(
            f"- {m.label}, --max-num-seqs {m.max_num_seqs_if}: {pool:.2f} GiB per GPU "
            f"({rel(pool, m.pool_gib):+.1f} %), {conc:.2f}x"
        )
    config_and_flags()
    print("\nSources:")
    for m in MEASUREMENTS:
        print(f"- {m.label}: {m.source}")


def config_and_flags() -> None:
    """llm-d's Qwen3-32B run (4.45 GiB = 18,227 tokens of 262,144 bytes) with the model read from
    its config.json, and typed as architecture flags (the MLP width derived when not given)."""
    common = ServingInputs(
        accelerator=H100_LLMD,
        kv_precision="bf16",
        context_tokens=16000,
        users=1,
        engine_profile="vllm-v1-0.9",
    )
    flags = replace(common, params_b=32.762123264, layers=64, kv_heads=8, head_dim=128)
    runs = {
        "read from its config.json": replace(
            common, model=model_from_config((CONFIGS / "qwen3-32b.json").read_text())
        ),
        "flags: parameters, layers, KV heads, head dim": flags,
        "flags + hidden size and vocabulary": replace(flags, hidden_size=5120, vocab_size=151936),
    }
    print("\nQwen3-32B, H100, 16,000 tokens (V1, llm-d): 18,227 tokens logged")
    for label, inputs in runs.items():
        est = estimate_serving(inputs)
        tokens = est.kv_cache_tokens or 0
        assumed = ", ".join(a for a in est.missing_assumptions if a == "intermediate_size")
        print(
            f"- {label}: {tokens:,} tokens ({rel(tokens, 18_227):+.1f} %)"
            + (f"; assumed {assumed}" if assumed else "")
        )


if __name__ == "__main__":
    main()
