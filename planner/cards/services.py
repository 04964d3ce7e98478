"""Workload cards: save a calculation as a card, delete it, seed the source's three example cards."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction

from accounts.models import User
from planner.calculator.runs import calculation_run, query_values
from planner.cards.models import WorkloadCard

KIND_FOR_ESTIMATE = {
    "serving": WorkloadCard.Kind.INTERACTIVE_SERVING,
    "batch": WorkloadCard.Kind.BATCH_INFERENCE,
    "training": WorkloadCard.Kind.TRAINING,
}


def _card_fields(inputs: dict[str, str], result: dict[str, Any]) -> dict[str, Any]:
    """The card's summary columns, read from the calculator's inputs and result."""
    estimate = inputs.get("estimate", "serving")
    fields: dict[str, Any] = {
        "kind": KIND_FOR_ESTIMATE[estimate],
        "model_name": inputs.get("model", "")
        or (f"{inputs['params_b']} B params" if "params_b" in inputs else ""),
        "precision": result.get("weight_precision")
        or ("4-bit base" if result.get("method") == "qlora" else "")
        or ("bf16" if estimate == "training" else ""),
        "concurrency": result.get("users") if estimate == "serving" else None,
        "batch_window_hours": float(inputs["window_hours"]) if estimate == "batch" else None,
    }
    return fields


def workload_card_create(
    *,
    owner: User,
    name: str,
    inputs: dict[str, str],
    result: dict[str, Any],
    latency_target_ms: int | None = None,
    notes: str = "",
    is_example: bool = False,
) -> WorkloadCard:
    """A card owned by `owner`; `inputs` are the calculator's query values, `result` its JSON."""
    card = WorkloadCard(
        owner=owner,
        is_example=is_example,
        name=name.strip(),
        latency_target_ms=latency_target_ms,
        notes=notes,
        inputs=inputs,
        result=result,
        **_card_fields(inputs, result),
    )
    card.full_clean()
    card.save()
    return card


def workload_card_delete(*, card: WorkloadCard) -> None:
    card.delete()


# The source's three cards ("Create one card per workload"), as parsed calculator inputs: the
# workloads lesson 8 ("Three cards, sized") sizes, so every figure it cites is what these cards,
# their calculator links and their "Compare paths" links show (tests/courses/test_lesson_eight_links.py).
# The chat card's slug predates its 8B model; saved links and demo data know it by that slug.
EXAMPLE_CARDS: list[dict[str, Any]] = [
    {
        "slug": "live-chat-7b",
        "name": "Live chat on an 8B model",
        "latency_target_ms": 2000,
        "notes": "7-8B instruct model at bf16 (KV cache bf16), first token under two seconds, "
        "context 8k, 20 concurrent users, streaming required; 2,000-token prompts and "
        "300-token answers, 1,000 requests a day. GPU memory and KV cache are the limit.",
        "kind": "serving",
        "data": {
            "gpu": "h100-sxm",
            "model": "llama-3.1-8b",
            "weight_precision": "bf16",
            "kv_precision": "bf16",
            "users": 20,
            "context_tokens": 8192,
            "prompt_tokens": 2000,
            "output_tokens": 300,
            "ttft_target_ms": 2000,
            # vLLM started as the comparison's deploy command starts it: --max-num-seqs at the
            # peak, so the calculator and the comparison count the same users.
            "max_num_seqs": 20,
            # Traffic for the comparison of paths (the calculator ignores it).
            "requests_per_day": 1000,
            "peak_concurrency": 20,
        },
    },
    {
        "slug": "nightly-embeddings",
        "name": "Nightly embedding of 50,000 chunks",
        "latency_target_ms": None,
        "notes": "Can finish in two hours; batching matters more than first-token latency; retryable "
        "on cheaper capacity. 400 tokens a chunk through BGE large (335M parameters); the rate per "
        "worker comes from the hardware until you measure one.",
        "kind": "batch",
        "data": {
            "items": 50000,
            "window_hours": Decimal("2"),
            "gpu": "t4",
            "model": "bge-large-en-v1.5",
            "tokens_per_item": 400,
            "output_tokens_per_item": 0,
            "retry_margin": Decimal("0.2"),
        },
    },
    {
        "slug": "occasional-fine-tuning",
        "name": "Occasional fine-tuning",
        "latency_target_ms": None,
        "notes": "Occasional, checkpointed, can use rented accelerators and stop when metrics "
        "plateau. LoRA (rank 16) on Llama 3.1 8B, 4 sequences of 2,048 tokens a step, 1,000 steps.",
        "kind": "training",
        "data": {
            "model": "llama-3.1-8b",
            "method": "lora",
            "lora_rank": 16,
            "batch_size": 4,
            "seq_len": 2048,
            "checkpointing": True,
            "gpu": "h100-sxm",
            "steps": 1000,
        },
    },
]


@transaction.atomic
def workload_cards_seed_examples() -> list[WorkloadCard]:
    """Create or update the three example cards by slug (idempotent); results are recomputed."""
    cards = []
    for spec in EXAMPLE_CARDS:
        # A wrong example raises CapacityInputError: fail loudly, never seed a broken card.
        result = calculation_run(spec["kind"], spec["data"]).to_dict()
        inputs = query_values(spec["kind"], spec["data"])
        card, _ = WorkloadCard.objects.update_or_create(
            slug=spec["slug"],
            is_example=True,
            owner=None,
            defaults={
                "name": spec["name"],
                "latency_target_ms": spec["latency_target_ms"],
                "notes": spec["notes"],
                "inputs": inputs,
                "result": result,
                **_card_fields(inputs, result),
            },
        )
        cards.append(card)
    return cards
