"""The serving estimate against the source's baseline and hand-worked values from model configs."""

from __future__ import annotations

from decimal import Decimal

import pytest

from planner.capacity import (
    CapacityInputError,
    ServingEstimate,
    ServingInputs,
    WarningCode,
    default_catalogue,
    estimate_serving,
    kv_bytes_per_token,
)

CAT = default_catalogue()


def baseline(**overrides: object) -> ServingInputs:
    values: dict[str, object] = {
        "gpu_memory_gb": 24,
        "model_gb": 14,
        "overhead_gb": 3,
        "kv_per_user_gb": 0.6,
    }
    values.update(overrides)
    return ServingInputs(**values)  # type: ignore[arg-type]


def on_catalogue(gpu: str, model: str, **overrides: object) -> ServingEstimate:
    """A catalogue GPU serving a catalogue model at bf16, one user unless overridden."""
    values: dict[str, object] = {
        "accelerator": CAT.accelerator(gpu),
        "model": CAT.model(model),
        "weight_precision": "bf16",
        "users": 1,
    }
    values.update(overrides)
    return estimate_serving(ServingInputs(**values))  # type: ignore[arg-type]


def test_source_baseline_is_exact() -> None:
    """24 GB - 14 GB - 3 GB leaves 7.0 GB; 7.0 GB // 0.6 GB is 11 whole users, exactly."""
    est = estimate_serving(baseline(users=11))
    assert est.available_for_cache_gb == 7.0
    assert est.available_for_cache_bytes == 7_000_000_000
    assert est.max_active_users == 11
    assert est.fits is True
    assert est.warnings == []
    assert est.to_dict()["max_active_users"] == 11


def test_baseline_with_floats_decimals_and_strings_of_digits_agree() -> None:
    """Decimal and float inputs give the same byte-exact answer (no 0.6 float drift)."""
    a = estimate_serving(baseline())
    b = estimate_serving(
        ServingInputs(
            gpu_memory_gb=Decimal("24"),
            model_gb=Decimal("14"),
            overhead_gb=Decimal("3"),
            kv_per_user_gb=Decimal("0.6"),
        )
    )
    assert a.to_dict() == b.to_dict()


def test_float_trap_inputs_round_down_exactly() -> None:
    """0.7 GB // 0.1 GB is 7 users; naive floats say 6 (0.7 // 0.1 == 6.0)."""
    est = estimate_serving(
        ServingInputs(gpu_memory_gb=1.7, model_gb=1, overhead_gb=0, kv_per_user_gb=0.1)
    )
    assert 0.7 // 0.1 == 6.0  # the trap the engine avoids
    assert est.max_active_users == 7


def test_baseline_with_twenty_users_does_not_fit() -> None:
    """The source's chat card wants 20 users; 11 fit, so the target is named as not fitting."""
    est = estimate_serving(baseline(users=20))
    assert est.fits is False
    assert [w.code for w in est.warnings] == [WarningCode.TARGET_USERS_DO_NOT_FIT]
    assert est.headroom_users == -9
    assert est.headroom_bytes == 24_000_000_000 - 14_000_000_000 - 3_000_000_000 - 20 * 600_000_000


def test_llama_3_1_8b_kv_bytes_per_token_from_config() -> None:
    """2 × 32 layers × 8 KV heads × 128 head dim × 2 bytes = 131,072 bytes per token."""
    spec = CAT.model("llama-3.1-8b")
    per_token = kv_bytes_per_token(
        layers=spec.layers, kv_heads=spec.kv_heads, head_dim=spec.head_dim, precision="bf16"
    )
    assert per_token == 131_072
    est = estimate_serving(
        ServingInputs(gpu_memory_gb=80, model=spec, overhead_gb=0, context_tokens=8192, users=1)
    )
    assert est.kv_bytes_per_token == 131_072
    assert est.kv_cache_per_user_bytes == 131_072 * 8192


def test_qwen2_5_7b_kv_bytes_per_token_from_config() -> None:
    """2 × 28 layers × 4 KV heads × 128 head dim × 2 bytes = 57,344 bytes per token."""
    est = estimate_serving(
        ServingInputs(
            gpu_memory_gb=80,
            model=CAT.model("qwen2.5-7b"),
            weight_precision="bf16",
            kv_precision="bf16",
            overhead_gb=2,
            context_tokens=4096,
            users=1,
        )
    )
    assert est.kv_bytes_per_token == 57_344


def test_gqa_is_not_ignored() -> None:
    """Counting all 32 attention heads (no GQA) would give 4x Llama-3.1-8B's real KV cache."""
    spec = CAT.model("llama-3.1-8b")
    assert spec.attention_heads == 4 * spec.kv_heads
    mha = kv_bytes_per_token(layers=32, kv_heads=32, head_dim=128, precision="bf16")
    assert mha == 4 * 131_072


def test_explicit_architecture_and_fp8_kv() -> None:
    """fp8 KV halves the bytes per token; users double (or more) on the same memory."""
    common = {"gpu_memory_gb": 48, "model_gb": 16, "overhead_gb": 2, "context_tokens": 8192}
    bf16 = estimate_serving(
        ServingInputs(layers=32, kv_heads=8, head_dim=128, kv_precision="bf16", **common)  # type: ignore[arg-type]
    )
    fp8 = estimate_serving(
        ServingInputs(layers=32, kv_heads=8, head_dim=128, kv_precision="fp8", **common)  # type: ignore[arg-type]
    )
    assert fp8.kv_bytes_per_token == 65_536
    # 30 GB / 1.073741824 GB = 27.9 -> 27; 30 GB / 0.536870912 GB = 55.9 -> 55
    assert (bf16.max_active_users, fp8.max_active_users) == (27, 55)


def test_weights_from_params_and_precision() -> None:
    """8.03 B params at int4 with AWQ/GPTQ group scales (4 + 20/128 bits) is 4.172 GB, not 4.015;
    at bf16 16.06 GB; bytes are exact."""
    est = estimate_serving(
        ServingInputs(
            gpu_memory_gb=24,
            params_b=8.03,
            weight_precision="int4",
            overhead_gb=1,
            kv_per_user_gb=1,
        )
    )
    assert est.weights_bytes == 4_171_835_938  # ⌈8.03e9 × 0.51953125⌉
    est = estimate_serving(
        ServingInputs(
            gpu_memory_gb=24,
            params_b=8.03,
            weight_precision="bf16",
            overhead_gb=1,
            kv_per_user_gb=1,
        )
    )
    assert est.weights_bytes == 16_060_000_000


def test_weights_do_not_fit_names_a_precision_that_would() -> None:
    """Llama-3.1-70B at bf16 (141.2 GB) does not fit 80 GB; at 8-bit (72.7 GB with 16-bit
    embeddings) it would, with one user: int8 on an A100 (no fp8 there), fp8 on an H100."""
    est = on_catalogue("a100-80gb", "llama-3.1-70b", overhead_gb=3, context_tokens=4096)
    assert est.fits is False
    assert est.max_active_users == 0
    assert est.available_for_cache_bytes == 0
    assert [w.code for w in est.warnings] == [WarningCode.WEIGHTS_DO_NOT_FIT]
    assert est.precision_that_fits == "int8"
    assert "int8" in est.warnings[0].message and "fp8" not in est.warnings[0].message
    h100 = on_catalogue("h100-sxm", "llama-3.1-70b", overhead_gb=3, context_tokens=4096)
    assert h100.precision_that_fits == "fp8"


def test_no_room_for_serving_is_an_error_not_zero_users() -> None:
    """Weights and overhead fit but not one user's KV cache: the source's assertion fails."""
    est = estimate_serving(baseline(kv_per_user_gb=7.5, params_b=7, weight_precision="bf16"))
    assert est.max_active_users == 0
    assert est.fits is False
    codes = [w.code for w in est.warnings]
    assert codes == [WarningCode.NO_ROOM_FOR_SERVING]
    assert est.warnings[0].severity == "error"
    assert est.precision_that_fits == "fp8"


def test_memory_bound_when_bandwidth_bound_is_below_target() -> None:
    """L4 (300 GB/s) reading 16.06 GB of weights + 1.07 GB KV per token: ≤ 17.5 tokens/s."""
    est = on_catalogue(
        "l4", "llama-3.1-8b", overhead_gb=2, context_tokens=8192, min_decode_tokens_per_s=20
    )
    expected = 300e9 / (16_060_000_000 + 131_072 * 8192)
    assert est.decode_tokens_per_s_upper_bound == pytest.approx(expected, abs=0.01)
    assert WarningCode.MEMORY_BOUND in [w.code for w in est.warnings]
    faster = on_catalogue(
        "h100-sxm", "llama-3.1-8b", overhead_gb=2, context_tokens=8192, min_decode_tokens_per_s=20
    )
    assert WarningCode.MEMORY_BOUND not in [w.code for w in faster.warnings]


def test_largest_context_for_target_users() -> None:
    """⌊available ÷ (users × KV bytes per token)⌋, and that context really fits."""
    llama_8b_architecture = {
        "kv_per_user_gb": None,
        "layers": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "kv_precision": "bf16",
        "users": 20,
    }
    est = estimate_serving(baseline(**llama_8b_architecture, context_tokens=8192))
    assert est.max_context_tokens_for_users == 7_000_000_000 // (20 * 131_072)
    again = estimate_serving(
        baseline(**llama_8b_architecture, context_tokens=est.max_context_tokens_for_users)
    )
    assert again.fits is True


def test_missing_assumptions_are_listed_not_silent() -> None:
    """Precision, context, overhead (so the engine's utilization and sequences) and users left out
    are named with what was assumed."""
    est = estimate_serving(ServingInputs(gpu_memory_gb=80, model=CAT.model("mistral-7b")))
    assert set(est.missing_assumptions) == {
        "gpu_memory_utilization",
        "max_num_seqs",
        "weight_precision",
        "kv_precision",
        "context_tokens",
        "overhead_gb",
        "users",
    }
    assert {a["field"] for a in est.to_dict()["assumptions"]} == set(est.missing_assumptions)


def test_context_longer_than_the_model_is_warned() -> None:
    est = estimate_serving(
        ServingInputs(
            gpu_memory_gb=80,
            model=CAT.model("phi-3-mini"),
            overhead_gb=1,
            context_tokens=8192,
            users=1,
        )
    )
    assert WarningCode.CONTEXT_EXCEEDS_MODEL in [w.code for w in est.warnings]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"gpu_memory_gb": -1}, "gpu_memory_gb"),
        ({"gpu_memory_gb": 0}, "gpu_memory_gb"),
        ({"kv_per_user_gb": 0}, "kv_per_user_gb"),
        ({"model_gb": -3}, "model_gb"),
        ({"overhead_gb": -1}, "overhead_gb"),
        ({"users": -2}, "users"),
        ({"weight_precision": "int3"}, "weight_precision"),
    ],
)
def test_bad_inputs_name_their_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(CapacityInputError) as err:
        estimate_serving(baseline(**kwargs))
    assert err.value.field == field


def test_nothing_to_size_without_memory_or_kv() -> None:
    with pytest.raises(CapacityInputError) as err:
        estimate_serving(ServingInputs(model_gb=14, kv_per_user_gb=1))
    assert err.value.field == "gpu_memory_gb"
    with pytest.raises(CapacityInputError) as err:
        estimate_serving(ServingInputs(gpu_memory_gb=24, model_gb=14))
    assert err.value.field == "kv_per_user_gb"


def test_mig_slice_is_a_device_of_its_own() -> None:
    """An A100 80GB 3g.40gb slice has 40 GB, 3/7 of the compute and 4/8 of the memory slices, so
    half the bandwidth (NVIDIA MIG user guide)."""
    acc = CAT.accelerator("a100-80gb:3g.40gb")
    assert acc.memory_gb == 40
    assert acc.memory_bandwidth_gb_s == pytest.approx(2039 / 2, abs=0.1)
    assert acc.dense_bf16_tflops == pytest.approx(312 * 3 / 7, abs=0.1)
    est = estimate_serving(
        ServingInputs(accelerator=acc, model_gb=14, overhead_gb=3, kv_per_user_gb=0.6)
    )
    assert est.max_active_users == 38  # 23 GB / 0.6 GB


def test_latency_target_and_output_length_set_the_decode_speed_needed() -> None:
    """256 output tokens within 2,000 ms need 128 tokens/s; an L4 streams at most ~17.5 (memory-bound);
    an H100 SXM is predicted at ~126 (bound 195.5): it meets 2,500 ms (102.4 tokens/s), not 2,000
    ms; within 1,000 ms (256 tokens/s) it is memory-bound even by the bound."""
    l4 = on_catalogue(
        "l4",
        "llama-3.1-8b",
        overhead_gb=2,
        context_tokens=8192,
        latency_target_ms=2000,
        output_tokens=256,
    )
    assert l4.required_decode_tokens_per_s == 128.0
    assert l4.to_dict()["required_decode_tokens_per_s"] == 128.0
    assert WarningCode.MEMORY_BOUND in l4.warning_codes
    assert "256 output tokens in 2,000 ms" in next(
        w.message for w in l4.warnings if w.code == WarningCode.MEMORY_BOUND
    )
    h100 = on_catalogue(
        "h100-sxm",
        "llama-3.1-8b",
        overhead_gb=2,
        context_tokens=8192,
        latency_target_ms=2500,
        output_tokens=256,
    )
    assert h100.decode_tokens_per_s_upper_bound == pytest.approx(
        3350e9 / (16_060_000_000 + 131_072 * 8192), abs=0.01
    )
    assert h100.required_decode_tokens_per_s == 102.4
    assert WarningCode.MEMORY_BOUND not in h100.warning_codes
    # Within 2,000 ms (128 tokens/s) the bound (195.5) would pass; the prediction (~126) does not.
    h100_2s = on_catalogue(
        "h100-sxm",
        "llama-3.1-8b",
        overhead_gb=2,
        context_tokens=8192,
        latency_target_ms=2000,
        output_tokens=256,
    )
    assert h100_2s.decode_tokens_per_s is not None and h100_2s.decode_tokens_per_s < 128
    assert WarningCode.MEMORY_BOUND in h100_2s.warning_codes
    tighter = on_catalogue(
        "h100-sxm",
        "llama-3.1-8b",
        overhead_gb=2,
        context_tokens=8192,
        latency_target_ms=1000,
        output_tokens=256,
    )
    assert tighter.required_decode_tokens_per_s == 256.0
    assert WarningCode.MEMORY_BOUND in tighter.warning_codes


def test_the_stricter_of_two_speed_targets_decides() -> None:
    """A min decode speed of 200 tokens/s is stricter than 256 tokens in 2 s (128 tokens/s)."""
    est = on_catalogue(
        "h100-sxm",
        "llama-3.1-8b",
        overhead_gb=2,
        context_tokens=8192,
        latency_target_ms=2000,
        output_tokens=256,
        min_decode_tokens_per_s=200,
    )
    assert est.required_decode_tokens_per_s == 200.0
    assert WarningCode.MEMORY_BOUND in est.warning_codes


def test_latency_target_without_output_length_is_a_missing_assumption() -> None:
    est = on_catalogue(
        "l4", "llama-3.1-8b", overhead_gb=2, context_tokens=8192, latency_target_ms=2000
    )
    assert "output_tokens" in est.missing_assumptions
    assert est.required_decode_tokens_per_s is None
    assert WarningCode.MEMORY_BOUND not in est.warning_codes


def test_latency_target_without_bandwidth_is_not_checked_silently() -> None:
    est = estimate_serving(baseline(latency_target_ms=500, output_tokens=100))
    assert est.required_decode_tokens_per_s == 200.0
    assert "memory_bandwidth_gb_s" in est.missing_assumptions
