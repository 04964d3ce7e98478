"""The serving engine's accounting (no overhead given), against hand-worked values."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from planner.capacity import (
    CapacityInputError,
    ServingEstimate,
    ServingInputs,
    WarningCode,
    default_catalogue,
    estimate_serving,
)

CAT = default_catalogue()
GIB = 2**30


def run(gpu: str, model: str, **kwargs: object) -> ServingEstimate:
    values: dict[str, object] = {"accelerator": CAT.accelerator(gpu), "model": CAT.model(model)}
    values.update(kwargs)
    return estimate_serving(ServingInputs(**values))  # type: ignore[arg-type]


def test_h100_llama_8b_pool_is_vllms_accounting_in_whole_blocks() -> None:
    """Current vLLM (V1) on an H100: 8,192 batched tokens and 1,024 sequences; the sampler's
    1,024 × 128,256 × 39 bytes outweighs the forward's 8,192 × 110,592; then 0.13 GiB non-torch
    and the 0.36 GiB CUDA-graph pool, in 16-token blocks of 131,072 bytes; whole 8k requests."""
    est = run("h100-sxm", "llama-3.1-8b", weight_precision="bf16", context_tokens=8192, users=1)
    usable = round(Fraction("79.22") * GIB)
    sampler = 1024 * 128_256 * 39
    assert sampler == 5_122_031_616 and sampler > 8192 * 110_592
    pool = (
        usable * Fraction(9, 10)
        - 16_060_000_000
        - sampler
        - Fraction("0.13") * GIB
        - Fraction("0.36") * GIB
    )
    blocks = int(pool // (16 * 131_072))
    assert est.available_for_cache_bytes == int(pool)
    assert est.kv_cache_tokens == blocks * 16
    assert est.max_active_users == blocks // 512
    parts = est.to_dict()["overhead_parts_bytes"]
    assert set(parts) == {
        "utilization_headroom",
        "activation_peak",
        "non_torch",
    }
    assert parts["activation_peak"] == sampler
    assert est.gpu_memory_bytes == usable  # 85.06 GB: an "80 GB" H100 has 80 GiB of HBM
    assert sum(parts.values()) == pytest.approx(est.overhead_bytes, abs=4)
    assert "gpu_memory_utilization" in est.missing_assumptions


def test_vllm_v0_profiles_the_whole_context_as_one_forward() -> None:
    """V0 (vllm pull 10511's profiler) batches max(8,192, 2,048) tokens: 8,192 × (3 × 14,336 +
    3 × 4,096) × 2 bytes = 905,969,664 for Llama-3.1-8B, above its 256 × 128,256 × 2-byte logits;
    0.16 GiB non-torch (vllm pull 12126); no CUDA-graph term."""
    est = run(
        "h100-sxm",
        "llama-3.1-8b",
        weight_precision="bf16",
        context_tokens=8192,
        engine_profile="vllm-v0",
    )
    usable = round(Fraction("79.22") * GIB)
    pool = usable * Fraction(9, 10) - 16_060_000_000 - 905_969_664 - Fraction("0.16") * GIB
    assert est.available_for_cache_bytes == int(pool)
    assert est.to_dict()["overhead_parts_bytes"]["activation_peak"] == 905_969_664


def test_v0_turns_chunked_prefill_on_above_32k_tokens() -> None:
    """Above 32,768 tokens V0 profiles 512 tokens (512 × 110,592 = 56,623,104 bytes), so its
    256 × 128,256 × 2-byte logits (65,667,072) are the peak."""
    est = run(
        "h100-sxm",
        "llama-3.1-8b",
        weight_precision="bf16",
        context_tokens=35_000,
        engine_profile="vllm-v0",
    )
    peak = est.to_dict()["overhead_parts_bytes"]["activation_peak"]
    assert peak == max(512 * 110_592, 256 * 128_256 * 2) == 65_667_072


def test_v1_on_a_small_gpu_profiles_2048_tokens_and_256_sequences() -> None:
    """An L40S (44.53 GiB) gets V1's smaller defaults: max(2,048 × 110,592, 256 × 128,256 × 39)."""
    est = run("l40s", "llama-3.1-8b", weight_precision="bf16", context_tokens=32768)
    peak = est.to_dict()["overhead_parts_bytes"]["activation_peak"]
    assert peak == max(2048 * 110_592, 256 * 128_256 * 39) == 1_280_507_904


def test_an_unknown_engine_profile_names_its_field() -> None:
    with pytest.raises(CapacityInputError) as err:
        run("h100-sxm", "llama-3.1-8b", engine_profile="tgi-2")
    assert err.value.field == "engine_profile"


def test_given_overhead_keeps_the_source_formula() -> None:
    """With an overhead the result is the course's planning function, not the engine's."""
    est = estimate_serving(
        ServingInputs(gpu_memory_gb=24, model_gb=14, overhead_gb=3, kv_per_user_gb=0.6, users=11)
    )
    assert (est.available_for_cache_gb, est.max_active_users, est.fits) == (7.0, 11, True)
    assert est.to_dict()["overhead_parts_bytes"] == {}


def test_llama_70b_fp8_on_one_h100_holds_no_4k_user() -> None:
    """The issue's case: 72.7 GB of fp8 weights (16-bit embeddings) on one H100 leave under
    one 4k request's KV cache in vLLM's pool; a 0 GB overhead (the old default) says 5."""
    est = run("h100-sxm", "llama-3.1-70b", weight_precision="fp8", context_tokens=4096, users=7)
    assert est.max_active_users < 2
    assert est.fits is False
    old = run(
        "h100-sxm", "llama-3.1-70b", weight_precision="fp8", context_tokens=4096, overhead_gb=0
    )
    assert old.max_active_users == 5


def test_quantised_weights_keep_16_bit_embeddings_and_lm_head() -> None:
    """Llama-3.1-8B AWQ: (8.03e9 − 2 × 128,256 × 4,096) × 4.156 bits + the 1.05e9 embedding and
    LM-head parameters at 2 bytes: about 5.73 GB (the AWQ checkpoint's on-disk size), not 4.0."""
    est = run("h100-sxm", "llama-3.1-8b", weight_precision="int4", overhead_gb=2, users=1)
    embed = 2 * 128_256 * 4096
    expected = (8_030_000_000 - embed) * Fraction(133, 256) + embed * 2
    assert est.weights_bytes == int(-(-expected // 1))
    assert 5.7e9 < est.weights_bytes < 5.8e9
    tied = run("l4", "gemma-2-9b", weight_precision="fp8", overhead_gb=1, users=1)
    assert tied.weights_bytes == 9_240_000_000 + 256_000 * 3584  # one shared table at 2 bytes


def test_vocab_and_hidden_size_are_inputs_too() -> None:
    est = estimate_serving(
        ServingInputs(
            gpu_memory_gb=24,
            params_b=8.03,
            weight_precision="int8",
            vocab_size=128_256,
            hidden_size=4096,
            overhead_gb=1,
            kv_per_user_gb=1,
        )
    )
    assert est.weights_bytes == 8_030_000_000 + 2 * 128_256 * 4096


def test_tensor_parallel_splits_weights_and_kv_heads() -> None:
    """Llama-3.1-70B bf16 (141.2 GB) fits four H100s (35.3 GB each); each GPU keeps 2 of the 8
    KV heads, so a token costs 81,920 bytes per GPU; non-torch memory is per GPU (and, reported
    with it, the CUDA-graph pool)."""
    one = run("h100-sxm", "llama-3.1-70b", weight_precision="bf16", context_tokens=8192)
    four = run(
        "h100-sxm",
        "llama-3.1-70b",
        weight_precision="bf16",
        context_tokens=8192,
        tensor_parallel=4,
    )
    assert one.max_active_users == 0 and WarningCode.WEIGHTS_DO_NOT_FIT in one.warning_codes
    assert four.max_active_users > 0 and four.tensor_parallel == 4
    usable = round(Fraction("79.22") * GIB)
    assert four.gpu_memory_bytes == 4 * usable
    # The sampler (1,024 × 128,256 × 39) outweighs each GPU's forward, 8,192 × (3 × 28,672 / 4
    # + 3 × 8,192) × 2 = 754,974,720; non-torch 0.55 GiB and the 0.36 GiB CUDA-graph pool per GPU.
    extra = 1024 * 128_256 * 39 + Fraction("0.55") * GIB + Fraction("0.36") * GIB
    pool = usable * Fraction(9, 10) - Fraction(141_200_000_000, 4) - extra
    assert four.kv_cache_tokens == int(pool // (16 * 81_920)) * 16
    non_torch = four.to_dict()["overhead_parts_bytes"]["non_torch"]
    assert non_torch == pytest.approx(4 * Fraction("0.91") * GIB, abs=4)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"gpu": "h100-sxm", "tensor_parallel": 3}, "tensor_parallel"),
        ({"gpu": "a100-80gb:3g.40gb", "tensor_parallel": 2}, "tensor_parallel"),
        ({"gpu": "h100-sxm", "kv_precision": "int4"}, "kv_precision"),
        ({"gpu": "h100-sxm", "gpu_memory_utilization": 1.5}, "gpu_memory_utilization"),
    ],
)
def test_impossible_deployments_name_their_field(kwargs: dict[str, object], field: str) -> None:
    gpu = CAT.accelerator(str(kwargs.pop("gpu")))
    with pytest.raises(CapacityInputError) as err:
        estimate_serving(ServingInputs(accelerator=gpu, model=CAT.model("llama-3.1-8b"), **kwargs))  # type: ignore[arg-type]
    assert err.value.field == field


def test_twenty_users_at_8k_on_an_h100_miss_100_tokens_per_second() -> None:
    """Batch-aware decode: 3,350 GB/s ÷ (16.06 GB + 20 × 1.074 GB) ≈ 89 tokens/s per user at
    best, below 100 (the single-stream bound said 195.6 and passed); the predicted rates stay
    under that roofline (planner.capacity.speed_model)."""
    est = run(
        "h100-sxm",
        "llama-3.1-8b",
        weight_precision="bf16",
        context_tokens=8192,
        users=20,
        overhead_gb=2,
        min_decode_tokens_per_s=100,
    )
    expected = 3350e9 / (16_060_000_000 + 20 * 131_072 * 8192)
    assert est.decode_batch == 20
    assert est.decode_tokens_per_s_upper_bound == pytest.approx(expected, abs=0.01)
    assert 88 < expected < 90
    assert est.aggregate_tokens_per_s is not None and est.decode_tokens_per_s is not None
    assert est.aggregate_tokens_per_s <= 20 * expected and est.decode_tokens_per_s <= expected
    assert WarningCode.MEMORY_BOUND in est.warning_codes and est.fits is False
    one = run(
        "h100-sxm",
        "llama-3.1-8b",
        weight_precision="bf16",
        context_tokens=8192,
        users=20,
        overhead_gb=2,
        min_decode_tokens_per_s=100,
        decode_batch=1,
    )
    single = 3350e9 / (16_060_000_000 + 131_072 * 8192)
    assert one.decode_tokens_per_s_upper_bound == pytest.approx(single, abs=0.01)


def test_compute_ceiling_caps_the_aggregate() -> None:
    """On a T4 (65 TFLOPS), 2 × 7.25e9 FLOPs a token caps a large batch at ~4,483 tokens/s; the
    prediction, at an achieved fraction of that peak, stays under it."""
    est = run(
        "t4",
        "mistral-7b",
        weight_precision="int4",
        kv_precision="fp8",
        context_tokens=512,
        overhead_gb=1,
        users=1,
        decode_batch=4000,
    )
    ceiling = 65e12 / (2 * 7.25e9)
    assert est.compute_ceiling_tokens_per_s == pytest.approx(ceiling, abs=0.1)
    assert est.aggregate_tokens_per_s is not None
    assert 0 < est.aggregate_tokens_per_s <= ceiling


def test_prefill_sets_time_to_first_token_and_the_answer_latency() -> None:
    """4,000 prompt tokens × 2 × 8.03e9 FLOPs take at least 32.5 ms at the H100's 989 TFLOPS peak
    (the estimate adds its achieved MFU and fixed cost); a 2 s answer of 256 tokens then needs 256
    ÷ (2 s − the first token) tokens/s, and a 100 ms first-token target is missed."""
    est = run(
        "h100-sxm",
        "llama-3.1-8b",
        weight_precision="bf16",
        context_tokens=8192,
        users=1,
        overhead_gb=2,
        prompt_tokens=4000,
        latency_target_ms=2000,
        output_tokens=256,
        ttft_target_ms=100,
    )
    at_peak = 4000 * 2 * 8.03e9 / 989e12
    assert est.time_to_first_token_ms is not None
    ttft = est.time_to_first_token_ms / 1000
    assert at_peak < ttft < 2
    assert est.required_decode_tokens_per_s == pytest.approx(256 / (2 - ttft), rel=1e-3)
    assert WarningCode.PREFILL_TOO_SLOW in est.warning_codes  # over the 100 ms target


def test_cost_per_million_output_tokens() -> None:
    est = run(
        "h100-sxm",
        "llama-3.1-8b",
        weight_precision="bf16",
        context_tokens=8192,
        users=20,
        overhead_gb=2,
    )
    assert est.aggregate_tokens_per_s is not None
    expected = 4.50 / (est.aggregate_tokens_per_s * 3600) * 1e6
    assert est.cost_per_million_output_tokens_usd == pytest.approx(expected, rel=1e-3)


def test_no_decode_bound_when_the_weights_do_not_fit() -> None:
    est = run("l4", "llama-3.1-70b", weight_precision="bf16", context_tokens=4096, users=1)
    assert WarningCode.WEIGHTS_DO_NOT_FIT in est.warning_codes
    assert est.decode_tokens_per_s_upper_bound is None
    assert est.cost_per_million_output_tokens_usd is None


def test_largest_context_is_capped_at_the_models_maximum() -> None:
    est = run("h200", "phi-3-mini", weight_precision="bf16", context_tokens=1024, users=1)
    assert est.max_context_tokens_for_users == 4096


def test_every_result_says_what_it_does_not_model() -> None:
    est = run("h100-sxm", "mixtral-8x7b", weight_precision="bf16", context_tokens=4096, users=1)
    notes = est.to_dict()["not_modelled"]
    assert any("Prefix caching" in n for n in notes) and any("Pipeline" in n for n in notes)
    assert WarningCode.MOE_ALL_EXPERTS_RESIDENT in est.warning_codes
    gemma = run("l40s", "gemma-2-27b", weight_precision="fp8", context_tokens=8192, users=1)
    assert WarningCode.SLIDING_WINDOW_UPPER_BOUND in gemma.warning_codes


def test_fp8_weights_on_an_a100_are_named_weight_only() -> None:
    """No fp8 tensor cores before Ada/Hopper: the weights shrink but compute stays at bf16 speed."""
    a100 = run("a100-80gb", "llama-3.1-8b", weight_precision="fp8", overhead_gb=2, users=1)
    assert WarningCode.PRECISION_NOT_NATIVE in a100.warning_codes
    assert a100.compute_ceiling_tokens_per_s == pytest.approx(312e12 / (2 * 8.03e9), abs=0.1)
    h100 = run("h100-sxm", "llama-3.1-8b", weight_precision="fp8", overhead_gb=2, users=1)
    assert WarningCode.PRECISION_NOT_NATIVE not in h100.warning_codes


def test_current_vllm_profiles_16k_tokens_on_a_large_gpu() -> None:
    """Llama-2-7B's shapes (MLP 11,008, vocabulary 32,000) on an H100: current vLLM's 16,384
    tokens × (3 × 11,008 + 3 × 4,096) × 2 = 1,484,783,616 bytes outweigh the sampler's
    1,024 × 32,000 × 39 = 1,277,952,000; vLLM 0.9-0.20's 8,192 tokens do not."""
    llama2 = replace(CAT.model("llama-3.1-8b"), intermediate_size=11_008, vocab_size=32_000)
    parts = {
        engine: estimate_serving(
            ServingInputs(
                accelerator=CAT.accelerator("h100-sxm"), model=llama2, engine_profile=engine
            )
        ).to_dict()["overhead_parts_bytes"]["activation_peak"]
        for engine in ("vllm-v1", "vllm-v1-0.9")
    }
    assert parts == {"vllm-v1": 1_484_783_616, "vllm-v1-0.9": 1_277_952_000}
