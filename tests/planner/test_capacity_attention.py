"""KV cache of attention variants against hand-worked values: multi-head latent attention (MLA)
as vLLM's MLA backends store it, and the windowed figure of sliding-window models."""

from __future__ import annotations

from dataclasses import replace

from planner.capacity import (
    ServingEstimate,
    ServingInputs,
    WarningCode,
    default_catalogue,
    estimate_serving,
)

CAT = default_catalogue()
LITE = CAT.model("deepseek-v2-lite")


def serve(**kwargs: object) -> ServingEstimate:
    values: dict[str, object] = {"accelerator": CAT.accelerator("h100-sxm"), "model": LITE}
    values.update(kwargs)
    return estimate_serving(ServingInputs(**values))  # type: ignore[arg-type]


def test_mla_caches_one_latent_per_layer() -> None:
    """DeepSeek-V2-Lite: 27 layers × (512 + 64) × 2 bytes = 31,104 bytes a token, where
    2 × 27 × 16 KV heads × 192 × 2 would say 331,776."""
    est = serve(context_tokens=4096)
    assert est.kv_bytes_per_token == 27 * 576 * 2 == 31_104
    fp8 = serve(context_tokens=4096, kv_precision="fp8")
    assert fp8.kv_bytes_per_token == 15_552
    assert WarningCode.MLA_LATENT_CACHE in est.warning_codes


def test_every_tensor_parallel_gpu_keeps_the_whole_latent() -> None:
    """At TP 2 each GPU's pool holds ⌊pool ÷ (16 × 31,104)⌋ blocks: the latent is not split."""
    est = serve(context_tokens=32768, tensor_parallel=2)
    per_gpu = est.available_for_cache_bytes // 2
    assert est.kv_cache_tokens == per_gpu // (16 * 31_104) * 16


def test_explicit_heads_override_the_latent() -> None:
    """A caller's KV heads and head dimension describe ordinary attention: 2 × 27 × 16 × 128 × 2."""
    est = serve(context_tokens=4096, kv_heads=16, head_dim=128)
    assert est.kv_bytes_per_token == 2 * 27 * 16 * 128 * 2
    assert WarningCode.MLA_LATENT_CACHE not in est.warning_codes


def test_sliding_window_warning_gives_the_windowed_share() -> None:
    """Gemma 2 9B at 8,192 tokens: 21 full layers × 8,192 + 21 windowed × 4,096 over 42 × 8,192
    = 75 % of the full count; at 4,096 tokens the window is no bound, so no warning."""
    gemma = CAT.model("gemma-2-9b")
    est = serve(model=gemma, context_tokens=8192)
    [note] = [w for w in est.warnings if w.code == WarningCode.SLIDING_WINDOW_UPPER_BOUND]
    assert "21 of its 42 layers" in note.message and "75%" in note.message
    short = serve(model=gemma, context_tokens=4096)
    assert WarningCode.SLIDING_WINDOW_UPPER_BOUND not in short.warning_codes
    every = serve(model=replace(gemma, sliding_window_layers=None), context_tokens=16384)
    [note] = [w for w in every.warnings if w.code == WarningCode.SLIDING_WINDOW_UPPER_BOUND]
    assert "every layer" in note.message and "25%" in note.message


def test_mla_request_matches_vllms_own_figure() -> None:
    """vLLM 0.8.3 (V1) refused DeepSeek-V2-Lite-Chat at 32,768 tokens: "(0.95 GiB KV cache is
    needed ...)" (vllm-project/vllm issue 15871); 32,768 × 31,104 bytes = 0.949 GiB."""
    est = serve(context_tokens=32768)
    assert round(est.kv_cache_per_user_bytes / 2**30, 2) == 0.95
