"""The catalogues: every row sourced, the required rows present, prices overridable."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.capacity import CapacityInputError, default_catalogue, load_catalogue
from planner.capacity.catalogue import PRICES_FILE_ENV

REQUIRED_ACCELERATORS = {
    "t4",
    "l4",
    "a10g",
    "l40s",
    "a100-40gb",
    "a100-80gb",
    "h100-sxm",
    "h200",
    "b200",
    "tpu-v5e",
    "tpu-v5p",
    "tpu-v6e",
    "cpu-server",
    "managed-api",
}
REQUIRED_MODELS = {
    "llama-3.1-8b",
    "llama-3.1-70b",
    "mistral-7b",
    "qwen2.5-7b",
    "gemma-2-9b",
    "phi-3-mini",
}


def test_required_rows_are_present_and_sourced() -> None:
    cat = default_catalogue()
    assert REQUIRED_ACCELERATORS <= {a.id for a in cat.accelerators}
    assert REQUIRED_MODELS <= {m.id for m in cat.models}
    for acc in cat.accelerators:
        assert acc.source.strip(), acc.id
    for model in cat.models:
        assert model.source.strip(), model.id
    api = cat.accelerator("managed-api")
    assert api.kind == "managed_api" and api.price_per_million_output_tokens_usd
    assert cat.accelerator("A100-80GB").mig_profiles  # case-insensitive, MIG listed


def test_model_head_dims_agree_with_configs() -> None:
    """head_dim = hidden / heads, except where config.json sets head_dim explicitly (or MLA's
    query-key head is qk_nope_head_dim + qk_rope_head_dim: 128 + 64 for DeepSeek-V2-Lite)."""
    explicit = {"gemma-2-9b", "gemma-2-27b", "qwen3-32b", "deepseek-v2-lite"}
    for m in default_catalogue().models:
        if m.id not in explicit:
            assert m.head_dim * m.attention_heads == m.hidden_size, m.id
        assert m.attention_heads % m.kv_heads == 0, m.id


def test_unknown_names_are_input_errors() -> None:
    with pytest.raises(CapacityInputError) as err:
        default_catalogue().accelerator("rtx-9090")
    assert err.value.field == "gpu"
    with pytest.raises(CapacityInputError):
        default_catalogue().model("gpt-7")


def test_deployment_overrides_prices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text("[prices]\nh100-sxm = 2.49\n")
    cat = load_catalogue(prices_file=prices)
    assert cat.accelerator("h100-sxm").price_per_hour_usd == 2.49
    monkeypatch.setenv(PRICES_FILE_ENV, str(prices))
    assert default_catalogue().accelerator("h100-sxm").price_per_hour_usd == 2.49
    prices.write_text("[prices]\nh100-sxmm = 2.49\n")
    with pytest.raises(ValueError, match="unknown accelerator"):
        load_catalogue(prices_file=prices)
