"""The catalogues: every row sourced, the required rows present, prices overridable."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.capacity import CapacityInputError, default_catalogue, load_catalogue
from planner.capacity.catalogue import PRICES_FILE_ENV, mig_slices

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
    "cpu-server-xeon",
    "h100-pcie",
    "managed-api",
}
REQUIRED_MODELS = {
    "llama-3.1-8b",
    "llama-3.1-70b",
    "mistral-7b",
    "qwen2.5-7b",
    "gemma-2-9b",
    "phi-3-mini",
    "qwen3-30b-a3b",
    "deepseek-v3",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "gemma-3-27b",
    "bge-base-en-v1.5",
    "bge-large-en-v1.5",
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
    # set in config.json too; tests/planner/test_capacity_hf_config.py reads those rows from it
    explicit |= {"qwen3-30b-a3b", "deepseek-v3", "gpt-oss-20b", "gpt-oss-120b", "gemma-3-27b"}
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


def test_b200_usable_memory_is_nvidia_smis_total_less_the_driver() -> None:
    """183,359 MiB listed (pytorch/ao pull 4002) less the ~438 MiB the driver keeps: 178.63 GiB,
    11 GiB more KV room than the 167.2 GiB the datasheet's 180 GB gave."""
    b200 = default_catalogue().accelerator("b200")
    assert b200.usable_memory_gib == pytest.approx((183_359 - 438) / 1024, abs=0.005)
    assert "183,359" in b200.usable_memory_source


def test_cpu_servers_have_their_own_channel_counts() -> None:
    cat = default_catalogue()
    epyc, xeon = cat.accelerator("cpu-server"), cat.accelerator("cpu-server-xeon")
    assert "EPYC" in epyc.name and epyc.memory_bandwidth_gb_s == 12 * 4800 * 8 / 1000
    assert "Xeon" in xeon.name and xeon.memory_bandwidth_gb_s == 8 * 4800 * 8 / 1000


def test_precisions_say_what_the_tensor_cores_compute() -> None:
    """Hopper has no INT4 tensor cores (int4 runs weight-only); Blackwell computes FP4 natively."""
    cat = default_catalogue()
    for gpu in ("h100-sxm", "h100-pcie", "h200"):
        assert not cat.accelerator(gpu).supports("int4"), gpu
        assert cat.accelerator(gpu).supports("fp8"), gpu
    assert cat.accelerator("b200").supports("mxfp4")
    assert not cat.accelerator("a100-80gb").supports("mxfp4")


def test_h100_pcie_sits_beside_the_sxm_part() -> None:
    cat = default_catalogue()
    pcie, sxm = cat.accelerator("h100-pcie"), cat.accelerator("h100-sxm")
    assert (pcie.memory_gb, pcie.memory_bandwidth_gb_s, pcie.dense_bf16_tflops) == (80, 2000, 756)
    assert pcie.interconnect == "pcie" and sxm.interconnect == "nvlink"
    assert pcie.interconnect_gb_s is not None and sxm.interconnect_gb_s is not None
    assert pcie.interconnect_gb_s < sxm.interconnect_gb_s


def test_b200_mig_slices_are_shares_of_its_148_sms() -> None:
    """1g.23gb has 18 of 148 SMs and 2g.45gb 36 (nvidia-smi mig -lgip, NVIDIA/mig-parted pull
    166), not one and two sevenths; the TFLOPS and the price follow."""
    b200 = default_catalogue().accelerator("b200")
    slices = {s.id: s for s in mig_slices(b200)}
    one = slices["b200:1g.23gb"]
    two = slices["b200:2g.45gb"]
    assert b200.dense_bf16_tflops is not None and one.dense_bf16_tflops is not None
    assert one.dense_bf16_tflops == pytest.approx(b200.dense_bf16_tflops * 18 / 148, abs=0.1)
    assert two.dense_bf16_tflops == pytest.approx(b200.dense_bf16_tflops * 36 / 148, abs=0.1)
    assert "18 of 148 SMs" in one.notes
    assert slices["b200:7g.180gb"].dense_bf16_tflops == b200.dense_bf16_tflops
    assert one.dense_bf16_tflops != pytest.approx(b200.dense_bf16_tflops / 7, abs=1)
