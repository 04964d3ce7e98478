"""Properties of the serving estimate that must hold for every input (hypothesis)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.capacity import (
    Accelerator,
    ModelSpec,
    ServingInputs,
    default_catalogue,
    estimate_serving,
)

gb = st.decimals(min_value=Decimal("0.1"), max_value=Decimal("400"), places=2)
small_gb = st.decimals(min_value=Decimal("0"), max_value=Decimal("20"), places=2)
kv_gb = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("8"), places=2)
context = st.integers(min_value=1, max_value=262_144)


@settings(max_examples=300, deadline=None)
@given(memory=gb, extra=gb, model=gb, overhead=small_gb, kv=kv_gb)
def test_more_memory_never_means_fewer_users(
    memory: Decimal, extra: Decimal, model: Decimal, overhead: Decimal, kv: Decimal
) -> None:
    small = estimate_serving(
        ServingInputs(gpu_memory_gb=memory, model_gb=model, overhead_gb=overhead, kv_per_user_gb=kv)
    )
    big = estimate_serving(
        ServingInputs(
            gpu_memory_gb=memory + extra, model_gb=model, overhead_gb=overhead, kv_per_user_gb=kv
        )
    )
    assert big.max_active_users >= small.max_active_users


@settings(max_examples=300, deadline=None)
@given(
    memory=gb,
    model=gb,
    overhead=small_gb,
    short=context,
    longer=context,
    layers=st.integers(1, 128),
    kv_heads=st.integers(1, 64),
    head_dim=st.sampled_from([64, 96, 128, 256]),
    precision=st.sampled_from(["fp32", "bf16", "fp8", "int8"]),
)
def test_longer_context_never_means_more_users(
    memory: Decimal,
    model: Decimal,
    overhead: Decimal,
    short: int,
    longer: int,
    layers: int,
    kv_heads: int,
    head_dim: int,
    precision: str,
) -> None:
    short, longer = min(short, longer), max(short, longer)
    arch = {"layers": layers, "kv_heads": kv_heads, "head_dim": head_dim, "kv_precision": precision}
    a = estimate_serving(
        ServingInputs(
            gpu_memory_gb=memory, model_gb=model, overhead_gb=overhead, context_tokens=short, **arch
        )
    )  # type: ignore[arg-type]
    b = estimate_serving(
        ServingInputs(
            gpu_memory_gb=memory,
            model_gb=model,
            overhead_gb=overhead,
            context_tokens=longer,
            **arch,
        )
    )  # type: ignore[arg-type]
    assert b.max_active_users <= a.max_active_users


@settings(max_examples=300, deadline=None)
@given(memory=gb, model=gb, overhead=small_gb, kv=kv_gb, users=st.integers(0, 500))
def test_users_times_kv_never_exceeds_available(
    memory: Decimal, model: Decimal, overhead: Decimal, kv: Decimal, users: int
) -> None:
    est = estimate_serving(
        ServingInputs(
            gpu_memory_gb=memory,
            model_gb=model,
            overhead_gb=overhead,
            kv_per_user_gb=kv,
            users=users,
        )
    )
    assert est.max_active_users * est.kv_cache_per_user_bytes <= est.available_for_cache_bytes
    # ... and one more user would not fit (max is the maximum).
    assert (est.max_active_users + 1) * est.kv_cache_per_user_bytes > est.available_for_cache_bytes
    assert (
        est.available_for_cache_bytes + est.weights_bytes + est.overhead_bytes
        >= est.gpu_memory_bytes
        or est.available_for_cache_bytes == 0
    )
    assert est.fits == (est.max_active_users >= max(users, 1))
    assert est.free_bytes >= 0


@settings(max_examples=200, deadline=None)
@given(memory=gb, model=gb, overhead=small_gb, kv=kv_gb)
def test_zero_users_is_always_named(
    memory: Decimal, model: Decimal, overhead: Decimal, kv: Decimal
) -> None:
    """Zero active users is never a silent number: it always carries an error warning."""
    est = estimate_serving(
        ServingInputs(gpu_memory_gb=memory, model_gb=model, overhead_gb=overhead, kv_per_user_gb=kv)
    )
    if est.max_active_users == 0:
        assert {w.code for w in est.warnings} & {"weights_do_not_fit", "no_room_for_serving"}
        assert est.fits is False


CAT = default_catalogue()
GPUS = [a for a in CAT.memory_devices() if not a.mig_of and a.kind == "gpu"]
MODELS = list(CAT.models)


@settings(max_examples=300, deadline=None)
@given(
    gpu=st.sampled_from(GPUS),
    model=st.sampled_from(MODELS),
    precision=st.sampled_from(["bf16", "fp8", "int4"]),
    context=st.integers(min_value=256, max_value=32_768),
    gpus=st.sampled_from([1, 2, 4, 8]),
    overhead=st.one_of(st.none(), small_gb),
    peer_to_peer=st.booleans(),
)
def test_more_gpus_never_mean_fewer_users(
    gpu: Accelerator,
    model: ModelSpec,
    precision: str,
    context: int,
    gpus: int,
    overhead: Decimal | None,
    peer_to_peer: bool,
) -> None:
    """Doubling the GPUs of a tensor-parallel deployment never loses a user (either accounting,
    with or without peer-to-peer access between the GPUs)."""
    if model.attention_heads % (2 * gpus):
        return
    common = {
        "accelerator": replace(gpu, peer_to_peer=peer_to_peer),
        "model": model,
        "weight_precision": precision,
        "context_tokens": context,
        "overhead_gb": overhead,
    }
    fewer = estimate_serving(ServingInputs(tensor_parallel=gpus, **common))  # type: ignore[arg-type]
    more = estimate_serving(ServingInputs(tensor_parallel=2 * gpus, **common))  # type: ignore[arg-type]
    assert more.max_active_users >= fewer.max_active_users
    if fewer.kv_cache_tokens is not None and more.kv_cache_tokens is not None:
        assert more.kv_cache_tokens >= fewer.kv_cache_tokens


@settings(max_examples=300, deadline=None)
@given(
    gpu=st.sampled_from(GPUS),
    model=st.sampled_from(MODELS),
    context=st.integers(min_value=256, max_value=32_768),
    batch=st.integers(min_value=1, max_value=512),
    extra=st.integers(min_value=1, max_value=512),
)
def test_a_larger_batch_never_means_a_higher_rate_per_user(
    gpu: Accelerator, model: ModelSpec, context: int, batch: int, extra: int
) -> None:
    common = {"accelerator": gpu, "model": model, "context_tokens": context, "overhead_gb": 1}
    small = estimate_serving(ServingInputs(decode_batch=batch, **common))  # type: ignore[arg-type]
    large = estimate_serving(ServingInputs(decode_batch=batch + extra, **common))  # type: ignore[arg-type]
    if small.decode_tokens_per_s_upper_bound is None:
        assert large.decode_tokens_per_s_upper_bound is None
        return
    assert large.decode_tokens_per_s_upper_bound is not None
    assert large.decode_tokens_per_s_upper_bound <= small.decode_tokens_per_s_upper_bound
    assert (large.aggregate_tokens_per_s or 0) >= (small.aggregate_tokens_per_s or 0) - 0.1


@settings(max_examples=200, deadline=None)
@given(
    gpu=st.sampled_from(GPUS),
    model=st.sampled_from(MODELS),
    context=st.integers(min_value=256, max_value=32_768),
    sequences=st.integers(min_value=1, max_value=1024),
    extra=st.integers(min_value=1, max_value=1024),
)
def test_more_profiled_sequences_never_mean_more_users(
    gpu: Accelerator, model: ModelSpec, context: int, sequences: int, extra: int
) -> None:
    """A larger --max-num-seqs only grows the start-up profile's sampler (V0 batches at least
    2,048 tokens, so vLLM accepts up to 2,048 sequences)."""
    common = {"accelerator": gpu, "model": model, "context_tokens": context}
    fewer = estimate_serving(
        ServingInputs(engine_profile="vllm-v0", max_num_seqs=sequences, **common)  # type: ignore[arg-type]
    )
    more = estimate_serving(
        ServingInputs(engine_profile="vllm-v0", max_num_seqs=sequences + extra, **common)  # type: ignore[arg-type]
    )
    assert more.max_active_users <= fewer.max_active_users
    assert (more.kv_cache_tokens or 0) <= (fewer.kv_cache_tokens or 0)
