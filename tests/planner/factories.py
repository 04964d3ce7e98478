"""Factories for the planner's tests: workload cards; rubrics, worksheets and submissions."""

from __future__ import annotations

from typing import Any

import factory
from django.utils import timezone
from factory.django import DjangoModelFactory

from accounts.models import User
from courses.models import Course, Enrollment
from planner.capstone.rubric import criterion_save, rubric_ensure
from planner.capstone.services import worksheet_autosave, worksheet_submit
from planner.models import CapstoneSubmission, CapstoneWorksheet, Level, Rubric, WorkloadCard
from tests.factories import CourseFactory, EnrollmentFactory, InstructorFactory, UserFactory


class WorkloadCardFactory(DjangoModelFactory[WorkloadCard]):
    class Meta:
        model = WorkloadCard

    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"Workload {n}")
    kind = WorkloadCard.Kind.INTERACTIVE_SERVING
    model_name = "7B instruct"
    concurrency = 20
    precision = "int8"


LEVELS = (("missing", "Missing", 0), ("partial", "Partial", 2), ("strong", "Strong", 4))


def rubric_with_levels(
    course: Course, criteria: tuple[tuple[str, str], ...] | None = None
) -> Rubric:
    """A rubric with two criteria (memory, operability), each with levels worth 0, 2 and 4.

    Built with the rubric services instructors use, so no factory redefines the models' fields.
    """
    rubric = rubric_ensure(course=course)
    for position, (key, title) in enumerate(
        criteria or (("memory", "Memory and KV estimate"), ("operability", "Operability"))
    ):
        criterion = criterion_save(
            rubric=rubric, criterion=None, data={"key": key, "title": title, "position": position}
        )
        Level.objects.bulk_create(
            Level(criterion=criterion, key=level_key, title=level_title, points=points, position=i)
            for i, (level_key, level_title, points) in enumerate(LEVELS)
        )
    return rubric


def course_taught_by(instructor: User | None = None, **course_kwargs: Any) -> Course:
    """A course with a rubric, taught by the given (or a new) instructor."""
    course = CourseFactory(**course_kwargs)
    EnrollmentFactory(
        course=course, user=instructor or InstructorFactory(), role=Enrollment.Role.INSTRUCTOR
    )
    rubric_with_levels(course)
    return course


# The source's baseline: 24 GB GPU, 14 GB weights, 3 GB overhead, 0.6 GB KV per user → 11 users.
GOOD_PLAN: dict[str, Any] = {
    "feature": "Live lesson chat",
    "user_problem": "Learners ask questions about a lesson and expect an answer within 2 s.",
    "workload_kind": WorkloadCard.Kind.INTERACTIVE_SERVING,
    "model_name": "7B instruct",
    "framework": "PyTorch + vLLM",
    "precision": "int8",
    "latency_target": "first token under 2 s, p95",
    "batch_window": "none (interactive)",
    "data_source": "lesson Markdown from the course repository",
    "autoscaling": "one replica per 10 active users, scale on queue depth",
    "budget": "$900 a month",
    "recommendation": CapstoneWorksheet.Recommendation.GPU,
    "recommendation_reasons": "A 7B model at int8 fits one 24 GB GPU with room for 10 users.",
    "gpu_memory_gb": 24,
    "model_gb": 14,
    "params_billion": 14,
    "overhead_gb": 3,
    "kv_per_user_gb": 0.6,
    "context_tokens": 8000,
    "batch_size": 1,
    "concurrency": 10,
    "claimed_max_users": 11,
}


def worksheet_for(learner: User, course: Course, **fields: Any) -> CapstoneWorksheet:
    if not Enrollment.objects.filter(course=course, user=learner).exists():
        EnrollmentFactory(course=course, user=learner)
    worksheet, _ = CapstoneWorksheet.objects.get_or_create(learner=learner, course=course)
    return worksheet_autosave(worksheet=worksheet, data={**GOOD_PLAN, **fields})


def submission_for(learner: User, course: Course, **fields: Any) -> CapstoneSubmission:
    now = fields.pop("now", None) or timezone.now()
    return worksheet_submit(worksheet=worksheet_for(learner, course, **fields), now=now)
