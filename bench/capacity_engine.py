"""Capacity engine throughput: estimates per second for serving, training and batch (pure Python).

Prints figures; never asserts a speed. Run: `.venv/bin/python bench/capacity_engine.py`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.capacity import (
    BatchInputs,
    ServingInputs,
    TrainingInputs,
    default_catalogue,
    estimate_batch,
    estimate_serving,
    estimate_training,
)


def rate(label: str, fn: object, n: int) -> None:
    call = fn  # type: ignore[assignment]
    start = time.perf_counter()
    for _ in range(n):
        call()  # type: ignore[operator]
    elapsed = time.perf_counter() - start
    print(f"{label:<44} {n / elapsed:>10,.0f} /s   {elapsed / n * 1e6:>8.1f} µs each")


def main() -> None:
    cat = default_catalogue()
    l40s, mistral = cat.accelerator("l40s"), cat.model("mistral-7b")
    baseline = ServingInputs(
        gpu_memory_gb=24, model_gb=14, overhead_gb=3, kv_per_user_gb=0.6, users=20
    )
    arch = ServingInputs(
        accelerator=l40s,
        model=mistral,
        weight_precision="bf16",
        kv_precision="bf16",
        overhead_gb=3,
        context_tokens=8192,
        users=20,
        min_decode_tokens_per_s=20,
    )
    training = TrainingInputs(
        model=mistral,
        method="qlora",
        lora_rank=16,
        batch_size=8,
        seq_len=2048,
        checkpointing=True,
        accelerator=cat.accelerator("a100-80gb"),
        steps=1000,
    )
    batch = BatchInputs(
        items=50_000, window_hours=2, items_per_s=10, retry_margin=0.2, price_per_hour=0.8
    )
    rate("serving, source baseline", lambda: estimate_serving(baseline), 20_000)
    rate("serving, catalogue GPU + model architecture", lambda: estimate_serving(arch), 20_000)
    rate("serving baseline + to_dict()", lambda: estimate_serving(baseline).to_dict(), 20_000)
    rate("training, QLoRA with activations and cost", lambda: estimate_training(training), 10_000)
    rate("batch, nightly embeddings", lambda: estimate_batch(batch), 20_000)
    start = time.perf_counter()
    from planner.capacity.catalogue import load_catalogue

    for _ in range(200):
        load_catalogue()
    print(
        f"{'catalogue load (TOML, uncached)':<44} {(time.perf_counter() - start) / 200 * 1e3:>10.2f} ms each"
    )


if __name__ == "__main__":
    main()
