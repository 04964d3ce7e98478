"""The automatic check recomputes a plan's memory numbers with the capacity engine."""

from __future__ import annotations

import pytest

from planner.capstone.check import plan_check, plan_estimate, precision_name
from planner.paths.runs import comparison_for_link
from tests.planner.factories import GOOD_PLAN


def test_plan_whose_memory_cannot_hold_its_concurrency_is_flagged() -> None:
    """24 GB − 14 GB − 3 GB leaves 7 GB: room for 11 users at 0.6 GB, not the 20 the plan states."""
    check = plan_check({**GOOD_PLAN, "concurrency": 20})
    assert check.estimate["max_active_users"] == 11
    assert check.estimate["available_for_cache_gb"] == pytest.approx(7.0)
    flagged = [f for f in check.findings if f.code == "target_users_do_not_fit"]
    assert flagged and flagged[0].severity == "error"
    assert "20 users" in flagged[0].message


def test_plan_within_its_memory_has_no_findings() -> None:
    """The baseline at 10 users with every number consistent disagrees with nothing."""
    check = plan_check(GOOD_PLAN)
    assert check.findings == []
    assert check.missing_assumptions == []


def test_weights_that_leave_no_room_for_kv_cache_are_flagged() -> None:
    """A plan whose weights and overhead fill the GPU cannot serve one user."""
    check = plan_check({**GOOD_PLAN, "model_gb": 20.8, "params_billion": None, "concurrency": 1})
    assert "no_room_for_serving" in check.codes
    assert check.estimate["max_active_users"] == 0


def test_weights_larger_than_the_gpu_are_flagged() -> None:
    check = plan_check({**GOOD_PLAN, "model_gb": 30, "params_billion": None})
    assert "weights_do_not_fit" in check.codes


def test_claimed_users_above_the_engines_max_are_flagged() -> None:
    check = plan_check({**GOOD_PLAN, "claimed_max_users": 25})
    finding = next(f for f in check.findings if f.code == "claimed_users_exceed")
    assert "25" in finding.message and "11" in finding.message


def test_weights_inconsistent_with_params_and_precision_are_flagged() -> None:
    """7 B parameters at int8 is about 7 GB, not the 14 GB the plan writes."""
    check = plan_check({**GOOD_PLAN, "params_billion": 7})
    assert "weights_disagree" in check.codes


def test_weights_computed_from_parameters_and_precision_when_not_given() -> None:
    """7 B at BF16 is 14 GB of weights; 8000 tokens × 0.075 MB is 0.6 GB KV per user."""
    content = {
        **GOOD_PLAN,
        "model_gb": None,
        "params_billion": 7,
        "precision": "BF16",
        "kv_per_user_gb": None,
        "context_tokens": 8000,
        "kv_per_token_mb": 0.075,
    }
    estimate = plan_estimate(content)
    assert estimate["weights_gb"] == pytest.approx(14.0)
    assert estimate["kv_cache_per_user_gb"] == pytest.approx(0.6)
    assert estimate["max_active_users"] == 11


def test_missing_assumptions_are_named() -> None:
    """Every assumption the source lists that the plan leaves empty is named, and only those."""
    content = {**GOOD_PLAN, "framework": "", "budget": "  ", "batch_size": None, "autoscaling": ""}
    check = plan_check(content)
    assert check.missing_assumptions == [
        "framework",
        "batch size",
        "autoscaling behaviour",
        "budget",
    ]


def test_plan_without_numbers_says_what_is_needed() -> None:
    check = plan_check({"feature": "Nightly embeddings"})
    assert check.codes == ["numbers_missing"]
    assert check.estimate == {}
    assert len(check.missing_assumptions) == 11


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("BF16", "bf16"),
        ("fp16", "fp16"),
        ("4-bit AWQ", "int4"),
        ("INT8", "int8"),
        ("FP8", "fp8"),
        ("fp32", "fp32"),
        ("", None),
    ],
)
def test_precision_names_from_free_text(text: str, name: str | None) -> None:
    assert precision_name(text) == name


def test_an_awq_checkpoints_real_size_is_not_called_a_disagreement() -> None:
    """Llama-3.1-8B AWQ is 5.73 GB on disk (int4 body with scales, 16-bit embeddings and LM head):
    the check no longer compares it with 8.03 B × 0.5 bytes = 4.0 GB. 14 GB at int4 still is."""
    awq = {**GOOD_PLAN, "model_gb": 5.73, "params_billion": 8.03, "precision": "4-bit AWQ"}
    assert "weights_disagree" not in plan_check(awq).codes
    wrong = {**awq, "model_gb": 14}
    assert "weights_disagree" in plan_check(wrong).codes


# --- the recommendation against an attached path comparison ---------------------------------


def chat_comparison(*exclude: str) -> dict[str, object]:
    """The course's chat card compared at 1,000 requests a day (planner.paths)."""
    link = (
        "/planner/paths/?estimate=serving&model=llama-3.1-8b&weight_precision=bf16"
        "&context_tokens=8192&users=20&ttft_target_ms=2000&requests_per_day=1000"
        + "".join(f"&exclude={p}" for p in exclude)
    )
    comparison = comparison_for_link(link)
    assert comparison is not None
    return comparison.to_dict()


def test_a_recommendation_the_comparison_rejects_is_flagged_with_why() -> None:
    """Every CPU option misses the chat card's 2 s first token: a CPU recommendation is wrong."""
    check = plan_check({**GOOD_PLAN, "recommendation": "cpu"}, chat_comparison())
    finding = next(f for f in check.findings if f.code == "recommendation_rejected")
    assert finding.severity == "error"
    assert "rejects every" in finding.message and "compute" in finding.message
    assert "first token after" in finding.message  # the reason, with the figures
    assert "Managed model API" in finding.message  # what it recommends instead
    assert check.comparison["recommended"]["path"] == "managed_api"  # type: ignore[index]


def test_an_excluded_path_is_flagged() -> None:
    check = plan_check(
        {**GOOD_PLAN, "recommendation": "managed_api"}, chat_comparison("managed_api")
    )
    assert "recommendation_excluded" in check.codes


def test_a_meeting_but_dearer_path_is_a_warning_and_the_recommended_one_is_clean() -> None:
    comparison = chat_comparison()
    gpu = plan_check({**GOOD_PLAN, "recommendation": "gpu"}, comparison)
    dearer = next(f for f in gpu.findings if f.code == "recommendation_dearer")
    assert dearer.severity == "warning" and "$" in dearer.message
    api = plan_check({**GOOD_PLAN, "recommendation": "managed_api"}, comparison)
    assert not [c for c in api.codes if c.startswith("recommendation_")]
    assert plan_check(GOOD_PLAN).comparison == {}  # nothing attached, nothing said
