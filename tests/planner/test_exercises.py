"""Exercises worked by the capacity engine: hand-worked values, the input that mattered most,
catalogue rows shown by name, and bad inputs named."""

from __future__ import annotations

import pytest

from planner.capacity import ServingInputs, default_catalogue, estimate_serving
from planner.capacity.exercises import EXERCISES, solve_exercise
from planner.capacity.units import CapacityInputError


def test_kv_bytes_per_token_matches_the_hand_worked_product() -> None:
    """2 (K and V) × 32 layers × 8 KV heads × 128 head dim × 2 bytes = 131,072 bytes."""
    solution = solve_exercise(
        "kv_bytes_per_token", {"layers": 32, "kv_heads": 8, "head_dim": 128, "kv_precision": "bf16"}
    )
    assert solution.answer == 2 * 32 * 8 * 128 * 2
    assert solution.unit == "bytes"
    assert [f.substituted for f in solution.formulas] == ["2 × 32 × 8 × 128 × 2 = 131,072 bytes"]
    fp8 = solve_exercise(
        "kv_bytes_per_token", {"layers": 80, "kv_heads": 8, "head_dim": 128, "kv_precision": "fp8"}
    )
    assert fp8.answer == 2 * 80 * 8 * 128 * 1


def test_memory_fit_with_a_given_overhead_is_memory_minus_weights_minus_overhead() -> None:
    """The course's planning function: 24 − 14 − 3 = 7.0 GB; 80 − 40.5 − 2.5 = 37 GB."""
    solution = solve_exercise("memory_fit", {"gpu_memory_gb": 24, "model_gb": 14, "overhead_gb": 3})
    assert solution.answer == 7.0
    assert any("24.0 GB − 14.0 GB − 3.0 GB = 7.0 GB" in f.substituted for f in solution.formulas)
    # ±10 % of the GPU's 24 GB moves the answer by 2.4 of 7 GB, more than the weights' 1.4.
    assert solution.most_sensitive == "gpu_memory_gb"
    assert solution.sensitivity == pytest.approx(2.4 / 7, abs=1e-3)
    other = solve_exercise(
        "memory_fit", {"gpu_memory_gb": 80, "model_gb": 40.5, "overhead_gb": 2.5}
    )
    assert other.answer == pytest.approx(37.0)


def test_catalogue_inputs_are_shown_by_name_and_answers_come_from_the_estimate() -> None:
    """A gpu id is shown as "NVIDIA L4"; max users is the serving estimate's own figure."""
    variables = {"gpu": "l4", "model": "llama-3.1-8b", "precision": "fp8", "context_tokens": 4096}
    solution = solve_exercise("max_users", variables)
    assert solution.shown["gpu"] == "NVIDIA L4"
    assert solution.shown["model"] == "Llama 3.1 8B"
    assert solution.shown["context_tokens"] == "4,096"
    catalogue = default_catalogue()
    estimate = estimate_serving(
        ServingInputs(
            accelerator=catalogue.accelerator("l4"),
            model=catalogue.model("llama-3.1-8b"),
            weight_precision="fp8",
            context_tokens=4096,
        )
    )
    assert solution.answer == estimate.max_active_users
    assert solution.most_sensitive == "context_tokens"


SAMPLES = {
    "memory_fit": {"gpu": "a10g", "model": "mistral-7b", "precision": "bf16", "overhead_gb": 2},
    "kv_bytes_per_token": {"model": "llama-3.1-70b"},
    "max_users": {"gpu": "h100-sxm", "model": "llama-3.1-8b", "context_tokens": 8192},
    "decode_tokens_per_s": {"gpu": "l4", "model": "llama-3.1-8b", "precision": "fp8", "users": 8},
    "time_to_first_token_ms": {"gpu": "h100-sxm", "model": "llama-3.1-8b", "prompt_tokens": 2000},
    "cost_per_million_output_tokens": {"gpu": "l4", "model": "llama-3.1-8b", "users": 4},
    "api_break_even_requests_per_day": {"gpu": "l4", "prompt_tokens": 500, "output_tokens": 200},
    "training_memory_gb": {"model": "llama-3.1-8b", "method": "lora"},
    "batch_job_hours": {"items": 50_000, "items_per_s": 20, "workers": 1},
    "mig_slice_fit": {"gpu": "a100-80gb", "model": "llama-3.1-8b", "users": 4},
    "moe_weights_read_gb": {"model": "mixtral-8x7b", "users": 4},
    "compute_bound_batch": {"gpu": "h100-sxm", "model": "llama-3.1-8b"},
    "spot_training_cost_usd": {
        "work_hours": 10,
        "price_per_hour": 1.5,
        "checkpoint_every_minutes": 30,
        "checkpoint_save_minutes": 2,
        "interruptions_per_day": 4,
        "restart_minutes": 10,
    },
    "checkpoint_interval_minutes": {"checkpoint_save_minutes": 2, "interruptions_per_day": 4},
    "quantised_weights_gb": {"gpu": "a100-80gb", "model": "llama-3.1-8b", "precision": "int4"},
}


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_every_exercise_gives_a_positive_answer_with_its_formula_lines(name: str) -> None:
    solution = solve_exercise(name, SAMPLES[name])
    assert solution.answer > 0
    assert solution.formulas


def test_break_even_is_cost_per_day_over_api_cost_per_request() -> None:
    """$0.80 × 24 = $19.20 a day; 500 + 200 tokens at $0.20 per million = $0.00014 a request."""
    solution = solve_exercise(
        "api_break_even_requests_per_day", {"gpu": "l4", "prompt_tokens": 500, "output_tokens": 200}
    )
    catalogue = default_catalogue()
    api = catalogue.managed_api()
    assert api is not None
    price = catalogue.accelerator("l4").price_per_hour_usd
    assert price is not None
    per_request = (
        500 * (api.price_per_million_input_tokens_usd or 0)
        + 200 * (api.price_per_million_output_tokens_usd or 0)
    ) / 1e6
    assert solution.answer == pytest.approx(price * 24 / per_request, rel=1e-4)


def test_mig_slice_fit_is_the_smallest_slice_that_serves() -> None:
    solution = solve_exercise(
        "mig_slice_fit", {"gpu": "a100-80gb", "model": "llama-3.1-8b", "users": 4}
    )
    catalogue = default_catalogue()
    smaller = [
        s
        for s in catalogue.memory_devices()
        if s.mig_of == "a100-80gb" and (s.memory_gb or 0) < solution.answer
    ]
    for slice_ in smaller:
        fits = estimate_serving(
            ServingInputs(accelerator=slice_, model=catalogue.model("llama-3.1-8b"), users=4)
        ).fits
        assert not fits, slice_.id


@pytest.mark.parametrize(
    ("name", "variables", "field"),
    [
        ("memory_fit", {"gpu_memory_gb": 24, "model_gb": 14, "users": 3}, "users"),
        ("memory_fit", {"gpu_memory_gb": 24}, "model"),
        ("memory_fit", {"gpu_memory_gb": -24, "model_gb": 14}, "gpu_memory_gb"),
        ("memory_fit", {"gpu_memory_gb": "lots", "model_gb": 14}, "gpu_memory_gb"),
        ("max_users", {"gpu": "h900", "model": "llama-3.1-8b"}, "gpu"),
        (
            "max_users",
            {"gpu": "l4", "model": "llama-3.1-8b", "context_tokens": 1.5},
            "context_tokens",
        ),
        ("decode_tokens_per_s", {"gpu": "t4", "model": "llama-3.1-70b"}, "model"),
        ("training_memory_gb", {"model": "llama-3.1-8b", "method": "dora"}, "method"),
        ("no_such_exercise", {}, "exercise"),
    ],
)
def test_bad_inputs_raise_naming_the_variable(name: str, variables: dict, field: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(CapacityInputError) as caught:
        solve_exercise(name, variables)
    assert caught.value.field == field


def test_an_input_of_zero_is_not_nudged() -> None:
    """10 % of nothing is nothing: a zero overhead is not the input that mattered most."""
    solution = solve_exercise("memory_fit", {"gpu_memory_gb": 24, "model_gb": 14, "overhead_gb": 0})
    assert solution.answer == 10.0
    assert solution.most_sensitive == "gpu_memory_gb"


def test_moe_memory_follows_the_total_and_a_step_reads_the_active_experts() -> None:
    """Mixtral 8x7B at bf16: one stream reads the 12.9 B active parameters (25.8 GB); a large
    batch touches every expert and reads nearly all 46.7 B (93.4 GB), what memory always holds."""
    one = solve_exercise("moe_weights_read_gb", {"model": "mixtral-8x7b", "users": 1})
    assert one.answer == pytest.approx(12.9 * 2, rel=1e-9)
    many = solve_exercise("moe_weights_read_gb", {"model": "mixtral-8x7b", "users": 64})
    assert many.answer == pytest.approx(46.7 * 2, rel=1e-6)
    four = solve_exercise("moe_weights_read_gb", {"model": "mixtral-8x7b", "users": 4})
    assert one.answer < four.answer < many.answer
    with pytest.raises(CapacityInputError) as err:
        solve_exercise("moe_weights_read_gb", {"model": "llama-3.1-8b"})
    assert err.value.field == "model"


def test_compute_bound_batch_is_the_ridge_point_over_the_intensity_per_stream() -> None:
    """H100 SXM at bf16: 989 TFLOPS ÷ 3,350 GB/s = 295.2 FLOP/byte; 2 FLOPs per 2-byte weight
    per stream, so decode of the weights turns compute-bound from a batch of 296."""
    solution = solve_exercise("compute_bound_batch", {"gpu": "h100-sxm", "model": "llama-3.1-8b"})
    assert solution.answer == 296
    assert solution.facts["tflops"] == "989"


def test_spot_training_cost_counts_saves_lost_work_and_restarts() -> None:
    """10 h of work, a 2-minute save every 30 minutes: 10.667 h running; 4 interruptions a day
    give 1.778 of them, each losing 15 + 10 minutes: 0.741 h; at $1.50: $17.11."""
    solution = solve_exercise("spot_training_cost_usd", SAMPLES["spot_training_cost_usd"])
    running = 10 * (1 + 2 / 30)
    lost = running * 4 / 24 * (15 + 10) / 60
    assert solution.answer == pytest.approx((running + lost) * 1.5)
    assert solution.formulas[-1].substituted.endswith("$17.11")


def test_young_interval_is_the_root_of_twice_the_save_time_the_mean_gap() -> None:
    solution = solve_exercise(
        "checkpoint_interval_minutes", {"checkpoint_save_minutes": 2, "interruptions_per_day": 4}
    )
    assert solution.answer == pytest.approx((2 * 2 * 360) ** 0.5)


def test_quantised_weights_name_their_kernel_path_per_gpu() -> None:
    """fp8 runs W8A8 on an H100 (fp8 tensor cores), weight-only W8A16 on an A100."""
    hopper = solve_exercise(
        "quantised_weights_gb", {"gpu": "h100-sxm", "model": "llama-3.1-8b", "precision": "fp8"}
    )
    ampere = solve_exercise(
        "quantised_weights_gb", {"gpu": "a100-80gb", "model": "llama-3.1-8b", "precision": "fp8"}
    )
    assert hopper.answer == ampere.answer
    assert hopper.facts["kernel"] == "W8A8"
    assert ampere.facts["kernel"] == "W8A16"
    int4 = solve_exercise(
        "quantised_weights_gb", {"gpu": "l4", "model": "llama-3.1-8b", "precision": "int4"}
    )
    assert int4.facts["kernel"] == "W4A16"
    assert int4.answer < hopper.answer


def test_training_memory_lines_add_up_to_the_answer() -> None:
    """Each part on its own line; the total line's terms are those parts and sum to the answer."""
    for variables in (
        {"model": "llama-3.1-8b", "method": "lora", "lora_rank": 16},
        {"model": "mistral-7b", "method": "qlora", "lora_rank": 8},
        {"params_b": 14, "method": "full", "gpus": 4},
    ):
        solution = solve_exercise("training_memory_gb", variables)
        total = solution.formulas[-1].substituted
        terms = [float(t) for t in total.split(" = ")[0].split(" + ")]
        assert sum(terms) == pytest.approx(solution.answer, abs=0.003)
        assert "CUDA context" in solution.formulas[-2].label


def test_batch_hours_without_a_window_never_divide_by_one() -> None:
    """The question gives no window: the working shows only the hours, from its own numbers."""
    solution = solve_exercise(
        "batch_job_hours", {"items": 50_000, "items_per_s": 10, "workers": 2, "retry_margin": 0.2}
    )
    assert [f.label for f in solution.formulas] == ["Hours needed"]
    assert "24" not in solution.formulas[0].substituted


def test_kernel_paths_follow_the_tensor_cores_each_gpu_has() -> None:
    """vLLM's quantisation table: fp8 W8A8 on Ada and Hopper, weight-only on Ampere, none on a
    T4 (Turing, no bf16 either); int4 is weight-only everywhere."""
    from planner.capacity.quantisation import kernel_path

    catalogue = default_catalogue()
    assert kernel_path(catalogue.accelerator("l4"), "fp8").name == "W8A8"
    assert kernel_path(catalogue.accelerator("a10g"), "fp8").name == "W8A16"
    assert kernel_path(catalogue.accelerator("t4"), "fp8").name == "none"
    assert kernel_path(catalogue.accelerator("t4"), "bf16").compute_precision == "fp16"
    assert kernel_path(catalogue.accelerator("h100-sxm"), "int4").name == "W4A16"


def test_spot_notice_periods_and_bad_intervals() -> None:
    from planner.capacity.spot import NOTICE_SECONDS, spot_run

    assert NOTICE_SECONDS["aws"] == 120 and NOTICE_SECONDS["gcp"] == 30
    with pytest.raises(CapacityInputError) as err:
        spot_run(
            work_hours=1,
            price_per_hour=1,
            checkpoint_every_minutes=0,
            checkpoint_save_minutes=1,
            interruptions_per_day=1,
            restart_minutes=1,
        )
    assert err.value.field == "checkpoint_every_minutes"
    calm = spot_run(
        work_hours=10,
        price_per_hour=2,
        checkpoint_every_minutes=30,
        checkpoint_save_minutes=0,
        interruptions_per_day=0,
        restart_minutes=0,
    )
    assert calm.expected_cost_usd == 20
