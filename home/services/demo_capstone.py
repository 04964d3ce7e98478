"""A few capstone plans from the simulated cohort, at different levels, submitted and awaiting
grading, so the instructor's grading queue and the automatic check have something to show."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from accounts.models import User
from courses.models import Course
from planner.capstone.services import worksheet_autosave, worksheet_get_or_create, worksheet_submit
from planner.models import CapstoneSubmission, CapstoneWorksheet

_CHAT: dict[str, Any] = {
    "feature": "Live lesson chat",
    "user_problem": "Learners ask about a lesson and expect an answer within 2 s.",
    "workload_kind": "interactive_serving",
    "model_name": "7B instruct",
    "framework": "PyTorch + vLLM",
    "precision": "bf16",
    "latency_target": "first token under 2 s, p95",
    "batch_window": "none (interactive)",
    "data_source": "lesson Markdown from the course repository",
    "budget": "$900 a month",
    "gpu_memory_gb": 24,
    "model_gb": 14,
    "params_billion": 7,
    "overhead_gb": 3,
    "kv_per_user_gb": 0.6,
    "context_tokens": 8000,
    "batch_size": 1,
    "concurrency": 10,
}
# Strong: the memory claim checks out and the plan says how it scales. Middling: right path,
# an optimistic claim. Weak: a claim the weights alone rule out, and no reasons.
PLANS: tuple[dict[str, Any], ...] = (
    {
        **_CHAT,
        "recommendation": CapstoneWorksheet.Recommendation.GPU,
        "recommendation_reasons": "14 GB of weights and 3 GB overhead leave 7 GB: 11 users "
        "at 0.6 GB each; a second replica past 10 active users.",
        "autoscaling": "one replica per 10 active users, scale on queue depth",
        "claimed_max_users": 11,
    },
    {
        **_CHAT,
        "recommendation": CapstoneWorksheet.Recommendation.GPU,
        "recommendation_reasons": "A 24 GB GPU holds the model with room to spare.",
        "autoscaling": "add a GPU when it feels slow",
        "claimed_max_users": 20,
    },
    {
        **_CHAT,
        "gpu_memory_gb": 16,
        "recommendation": CapstoneWorksheet.Recommendation.CPU,
        "recommendation_reasons": "",
        "autoscaling": "",
        "claimed_max_users": 40,
    },
)


def demo_capstone_plans(*, course: Course, learners: list[User], now: datetime) -> int:
    """One plan per level from the first simulated learners, once. Returns plans submitted."""
    submitted = 0
    for days_ago, (learner, plan) in enumerate(zip(learners, PLANS, strict=False), start=1):
        if CapstoneSubmission.objects.filter(learner=learner, worksheet__course=course).exists():
            continue
        worksheet = worksheet_get_or_create(learner=learner, course=course)
        worksheet_autosave(worksheet=worksheet, data=plan)
        worksheet_submit(worksheet=worksheet, now=now - timedelta(days=days_ago))
        submitted += 1
    return submitted
