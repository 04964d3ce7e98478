"""The rubric editor: a used level is refused with a message and nothing half-saved; level points
are bounded so a grade's total always fits (issue 12)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from planner.capstone.grading import ScoreInput, grade_save_draft, submission_claim
from planner.models import Grade, Level
from tests.planner.factories import LEVELS
from tests.security.conftest import World
from tests.security.test_fuzz_forms import _criterion_post

pytestmark = pytest.mark.django_db


def test_ticking_every_level_where_one_is_used_deletes_none_and_says_why(world: World) -> None:
    """Issue 12: three levels were deleted, the criterion change committed, then a 500."""
    criterion = world.criterion
    used = criterion.levels.get(key="strong")
    now = timezone.now()
    submission_claim(grader=world.staff, submission_id=world.submission.pk, now=now)
    grade_save_draft(
        grader=world.staff,
        submission_id=world.submission.pk,
        scores=[ScoreInput(criterion_id=criterion.pk, level_id=used.pk)],
        overall_feedback="",
        now=now,
    )
    Level.objects.create(criterion=criterion, key="exemplary", title="Exemplary", points=5)
    data = _criterion_post(criterion, {})
    data["title"] = "Renamed"
    for i in range(criterion.levels.count()):
        data[f"levels-{i}-DELETE"] = "on"
    client = Client()
    client.force_login(world.instructor)

    response = client.post(
        reverse("capstone:criterion", args=[world.course.slug, criterion.pk]), data
    )

    assert response.status_code == 400
    assert f"The level {used.title} has been used in grades" in response.content.decode()
    assert criterion.levels.count() == len(LEVELS) + 1
    criterion.refresh_from_db()
    assert criterion.title != "Renamed"


@pytest.mark.parametrize("points", ["2147483647", "1001", "1e400", "-1"])
def test_level_points_past_the_range_are_refused_and_grading_still_works(
    world: World, points: str
) -> None:
    """2147483647 points on each criterion's top level used to make every grade a 500."""
    client = Client()
    client.force_login(world.instructor)
    for criterion in world.course.rubric.criteria.all():
        response = client.post(
            reverse("capstone:criterion", args=[world.course.slug, criterion.pk]),
            _criterion_post(criterion, {"points_2": points}),
        )
        assert response.status_code == 400
        assert "Points" in response.content.decode()

    client.force_login(world.staff)
    client.post(reverse("capstone:claim", args=[world.submission.pk]))
    grade = {"action": "release", "overall_feedback": ""}
    for criterion in world.course.rubric.criteria.all():
        grade[f"level_{criterion.pk}"] = str(criterion.levels.order_by("-points").first().pk)
    response = client.post(reverse("capstone:grade_save", args=[world.submission.pk]), grade)

    assert response.status_code == 302
    assert Grade.objects.get(submission=world.submission).total_points == 8


def test_the_admin_refuses_level_points_past_the_range_too(world: World) -> None:
    criterion = world.criterion
    levels = list(criterion.levels.order_by("pk"))
    data = {
        "rubric": str(criterion.rubric_id),
        "key": criterion.key,
        "title": criterion.title,
        "description": criterion.description,
        "position": str(criterion.position),
        "levels-TOTAL_FORMS": str(len(levels)),
        "levels-INITIAL_FORMS": str(len(levels)),
        "levels-MIN_NUM_FORMS": "0",
        "levels-MAX_NUM_FORMS": "1000",
    }
    for i, level in enumerate(levels):
        data.update(
            {
                f"levels-{i}-id": str(level.pk),
                f"levels-{i}-criterion": str(criterion.pk),
                f"levels-{i}-key": level.key,
                f"levels-{i}-title": level.title,
                f"levels-{i}-points": "2147483647" if i == len(levels) - 1 else str(level.points),
                f"levels-{i}-description": level.description,
                f"levels-{i}-position": str(level.position),
            }
        )
    client = Client()
    client.force_login(world.staff)

    response = client.post(reverse("admin:planner_criterion_change", args=[criterion.pk]), data)

    assert response.status_code == 200  # the form again, with the error
    assert "must be a whole number from 0 to 1,000" in response.content.decode()
    assert max(criterion.levels.values_list("points", flat=True)) == 4
