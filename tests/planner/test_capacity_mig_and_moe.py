"""Review fixes in the catalogue and the estimates: MIG slices hold the memory nvidia-smi lists,
MIG exists per SKU, mixtures of experts show their active parameters, and the precision hint
offers what the engine fits at int4 weight-only."""

from __future__ import annotations

import pytest

from planner.capacity import (
    ServingInputs,
    TrainingInputs,
    default_catalogue,
    estimate_serving,
    estimate_training,
)
from planner.capacity.catalogue import mig_slices

CAT = default_catalogue()


@pytest.mark.parametrize(
    ("slice_id", "listed_gib"),
    [
        ("h200:1g.35gb", 32.25),  # github.com/NVIDIA/mig-parted/issues/120
        ("h200:7g.141gb", 139.75),
        ("h100-sxm:1g.10gb", 9.75),
        ("a100-80gb:3g.40gb", 39.25),
        ("a100-40gb:1g.5gb", 4.75),
        ("b200:1g.23gb", 22.00),
    ],
)
def test_a_mig_slice_holds_the_memory_nvidia_smi_lists(slice_id: str, listed_gib: float) -> None:
    """Not the parent's runtime total prorated (an H200 1g.35gb would be 34.74 GiB)."""
    acc = CAT.accelerator(slice_id)
    assert acc.usable_memory_gib == listed_gib
    assert "nvidia-smi mig -lgip" in acc.usable_memory_source


def test_the_h200_slice_serves_the_users_its_listed_memory_holds() -> None:
    """vLLM's pool on the 1g.35gb slice starts from 32.25 GiB: fewer users than a pro-rata
    34.74 GiB would hold."""
    acc = CAT.accelerator("h200:1g.35gb")
    est = estimate_serving(
        ServingInputs(
            accelerator=acc,
            model=CAT.model("llama-3.1-8b"),
            weight_precision="bf16",
            context_tokens=8192,
            users=1,
        )
    )
    assert est.gpu_memory_bytes == round(32.25 * 2**30)
    prorated = estimate_serving(
        ServingInputs(
            gpu_memory_gb=34.74 * 2**30 / 10**9,
            model=CAT.model("llama-3.1-8b"),
            weight_precision="bf16",
            context_tokens=8192,
            gpu_memory_utilization=0.9,
            users=1,
        )
    )
    assert est.max_active_users < prorated.max_active_users


def test_a_profile_without_a_listing_says_it_is_prorated() -> None:
    acc = CAT.accelerator("b200:3g.90gb")
    assert acc.usable_memory_source.startswith("no published listing")


def test_mig_exists_per_sku() -> None:
    """A10G, L4, L40S and T4 have no MIG (MIG user guide, Supported GPUs); their notes say so."""
    for gpu in ("t4", "l4", "a10g", "l40s"):
        acc = CAT.accelerator(gpu)
        assert not acc.has_mig and not mig_slices(acc), gpu
        assert "No MIG" in acc.notes, gpu
    for gpu in ("a100-40gb", "a100-80gb", "h100-sxm", "h200", "b200"):
        assert CAT.accelerator(gpu).has_mig, gpu


def test_moe_estimates_report_their_active_parameters() -> None:
    """Memory follows the total, decode the active: both JSON forms carry active_params_b."""
    moe, dense = CAT.model("mixtral-8x7b"), CAT.model("llama-3.1-8b")
    h100 = CAT.accelerator("h100-sxm")
    serving = estimate_serving(
        ServingInputs(accelerator=h100, model=moe, weight_precision="fp8", users=1)
    ).to_dict()
    assert serving["active_params_b"] == moe.active_params_b
    assert serving["active_params_b"] < serving["params"] / 1e9
    training = estimate_training(TrainingInputs(model=moe, method="qlora")).to_dict()
    assert training["active_params_b"] == moe.active_params_b
    dense_json = estimate_serving(
        ServingInputs(accelerator=h100, model=dense, weight_precision="bf16", users=1)
    ).to_dict()
    assert dense_json["active_params_b"] is None


@pytest.mark.parametrize("gpu", ["h100-sxm", "h100-pcie", "l40s"])
def test_the_precision_hint_offers_int4_where_the_engine_fits_it(gpu: str) -> None:
    """Llama 3.1 70B at bf16 does not fit one GPU; Hopper has no INT4 tensor cores but runs
    int4 weight-only, and the engine fits it there: the hint must not say nothing fits."""
    acc, model = CAT.accelerator(gpu), CAT.model("llama-3.1-70b")
    common = {"accelerator": acc, "model": model, "context_tokens": 4096, "users": 1}
    bf16 = estimate_serving(ServingInputs(weight_precision="bf16", **common))  # type: ignore[arg-type]
    int4 = estimate_serving(ServingInputs(weight_precision="int4", **common))  # type: ignore[arg-type]
    assert not bf16.fits and int4.fits
    assert bf16.precision_that_fits == "int4"
    message = " ".join(w.message for w in bf16.warnings)
    assert "No precision down to int4" not in message
    if not acc.supports("int4"):
        assert "weight-only" in message


def test_the_hint_says_nothing_fits_only_when_int4_does_not() -> None:
    acc, model = CAT.accelerator("a100-40gb"), CAT.model("llama-3.1-70b")
    common = {"accelerator": acc, "model": model, "context_tokens": 4096, "users": 1}
    bf16 = estimate_serving(ServingInputs(weight_precision="bf16", **common))  # type: ignore[arg-type]
    int4 = estimate_serving(ServingInputs(weight_precision="int4", **common))  # type: ignore[arg-type]
    assert not int4.fits and bf16.precision_that_fits is None
    assert any("No precision down to int4" in w.message for w in bf16.warnings)


def test_the_new_rows_carry_their_own_figures_and_sources() -> None:
    """MI300X (HBM3, Infinity Fabric, not PCIe), GH200 (96 GB HBM3) and a two-socket Xeon 6
    whose compute is its own AMX rate, not the EPYC's fallback."""
    mi300x, gh200, xeon = (CAT.accelerator(a) for a in ("mi300x", "gh200", "cpu-xeon6-2s"))
    assert (mi300x.memory_gb, mi300x.memory_bandwidth_gb_s, mi300x.dense_bf16_tflops) == (
        192,
        5300,
        1307.4,
    )
    assert mi300x.interconnect == "infinity-fabric" and not mi300x.has_mig
    assert "amd.com" in mi300x.source
    assert gh200.memory_gb == 96 and "NVLink-C2C" in gh200.source
    # 2 sockets x 128 cores x 2.0 GHz x 1,024 AMX bf16 FLOPs a cycle; 12 MRDIMM-8800 channels each.
    assert xeon.dense_bf16_tflops == pytest.approx(2 * 128 * 2.0e9 * 1024 / 1e12, abs=0.1)
    assert xeon.dense_int8_tops == pytest.approx(2 * xeon.dense_bf16_tflops, abs=0.1)
    assert xeon.memory_bandwidth_gb_s == pytest.approx(2 * 12 * 8800 * 8 / 1000)


def test_mi300x_tensor_parallel_pays_infinity_fabric_not_pcie() -> None:
    from planner.capacity.speed_model import ALL_REDUCE_STEP_LATENCY_S, all_reduce_latency

    mi300x = CAT.accelerator("mi300x")
    assert all_reduce_latency(mi300x, 8) == 6 * ALL_REDUCE_STEP_LATENCY_S["infinity-fabric"]
    assert all_reduce_latency(mi300x, 8) < all_reduce_latency(CAT.accelerator("l40s"), 8)


def test_a_xeon_6_server_computes_with_its_own_amx_figure() -> None:
    """A 1,024-token prompt of Llama 3.3 70B at int8 takes seconds on the Xeon 6 server, not the
    minutes the EPYC's 14.7 TFLOPS fallback would give."""
    xeon, epyc = CAT.accelerator("cpu-xeon6-2s"), CAT.accelerator("cpu-server")
    model = CAT.model("llama-3.3-70b")
    common = {"model": model, "weight_precision": "int8", "users": 1, "prompt_tokens": 1024}
    fast = estimate_serving(ServingInputs(accelerator=xeon, context_tokens=2048, **common))  # type: ignore[arg-type]
    slow = estimate_serving(
        ServingInputs(accelerator=epyc, context_tokens=2048, **common)  # type: ignore[arg-type]
    )
    assert fast.time_to_first_token_ms is not None and slow.time_to_first_token_ms is not None
    assert 1_000 < fast.time_to_first_token_ms < 5_000
    assert slow.time_to_first_token_ms > 4 * fast.time_to_first_token_ms
