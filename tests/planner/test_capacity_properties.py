"""Properties of the serving estimate that must hold for every input (hypothesis)."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.capacity import ServingInputs, estimate_serving

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
    precision=st.sampled_from(["fp32", "bf16", "fp8", "int4"]),
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
