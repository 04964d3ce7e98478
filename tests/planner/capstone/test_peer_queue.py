"""The grading queue's "flagged by peers" filter: exactly the plans the peer step sent to staff,
each with its reasons, in the queue's keyset pages, whatever levels the peers gave."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.capstone.grading_selectors import grading_queue, grading_queue_page
from planner.capstone.peer_grading import peer_deadline_sweep, peer_plans_grade
from planner.capstone.peer_models import PeerPlan
from planner.models import Grade
from tests.planner.capstone.peer_helpers import (
    assess_all,
    learners_with_plans,
    peer_course,
    split_plan,
)

pytestmark = pytest.mark.django_db

LEVELS = ("missing", "partial", "strong")


def test_the_flagged_filter_lists_the_flagged_plans_with_their_reasons(client) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    instructor = course.enrollments.get(role="instructor").user
    learners = learners_with_plans(course, 4)
    target = split_plan(course, learners)
    peer_plans_grade(course=course, now=timezone.now())
    client.force_login(instructor)
    url = reverse("capstone:grading_queue")
    everything = client.get(url, {"course": course.slug})
    assert len(everything.context["rows"]) == 4
    flagged = client.get(url, {"course": course.slug, "peer": "flagged"})
    assert [row.pk for row in flagged.context["rows"]] == [target.submission_id]
    body = flagged.content.decode()
    assert "Flagged by peers (1)" in body and "1 submitted plan matches" in body
    assert "Peers disagree by 2 levels on Memory and KV estimate." in body
    # Combined with a status: the flagged plan is ungraded; none is released.
    assert len(client.get(url, {"peer": "flagged", "status": "ungraded"}).context["rows"]) == 1
    released = client.get(url, {"peer": "flagged", "status": "released"})
    assert released.context["rows"] == [] and "No plan flagged by peers matches" in (
        released.content.decode()
    )
    # An unknown value is no filter, as an unknown status is.
    assert len(client.get(url, {"peer": "x" * 500}).context["rows"]) == 4


def test_the_flagged_filter_pages_like_the_queue(client) -> None:  # type: ignore[no-untyped-def]
    """Plans short of assessors at the deadline: 60 flagged, two pages, the next link keeps
    the filter, every plan once, oldest first."""
    now = timezone.now()
    course = peer_course(deadline=now + timedelta(days=1))
    instructor = course.enrollments.get(role="instructor").user
    learners_with_plans(course, 60)
    peer_deadline_sweep(course=course, now=now + timedelta(days=2))
    client.force_login(instructor)
    first = client.get(reverse("capstone:grading_queue"), {"peer": "flagged"})
    assert len(first.context["rows"]) == 50
    assert "Only 0 of 3 peer assessments by the deadline." in first.content.decode()
    assert f"peer=flagged&amp;after={first.context['next_after']}" in first.content.decode()
    second = client.get(
        reverse("capstone:grading_queue"),
        {"peer": "flagged", "after": first.context["next_after"]},
    )
    seen = [r.pk for r in first.context["rows"]] + [r.pk for r in second.context["rows"]]
    assert len(seen) == len(set(seen)) == 60 and second.context["next_after"] is None


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data(), plans=st.integers(4, 6))
def test_the_filter_is_exactly_the_flagged_plans_whatever_the_peers_said(
    data: st.DataObject, plans: int
) -> None:
    """Random levels from each assessor on each plan (three per plan), graded by the real
    model: walking the filter's pages two at a time yields exactly the plans it flagged, in
    queue order, each with its reasons; every other plan has the peers' grade."""
    with transaction.atomic():
        course = peer_course()
        instructor = course.enrollments.get(role="instructor").user
        learners = learners_with_plans(course, plans)
        drawn: dict[tuple[int, int], str] = {}

        def level_for(learner, assessment):  # type: ignore[no-untyped-def]
            key = (learner.pk, assessment.plan_id)
            drawn[key] = data.draw(st.sampled_from(LEVELS), label=f"level {key}")
            return drawn[key]

        assess_all(course, learners, level_for)
        now = timezone.now()
        peer_plans_grade(course=course, now=now)
        queue = grading_queue(user=instructor, now=now, course_ids=[course.pk], peer="flagged")
        listed, after = [], None
        while True:
            page = grading_queue_page(queue, after=after, size=2)
            listed += page.rows
            after = page.next_after
            if after is None:
                break
        flagged = PeerPlan.objects.filter(course=course, state=PeerPlan.State.FLAGGED)
        expected = sorted(flagged, key=lambda p: (p.submission.submitted_at, p.submission_id))
        assert [s.pk for s in listed] == [p.submission_id for p in expected]
        assert all(s.peer_plan.result["flags"] for s in listed)
        # Every plan is decided: the rest are graded by peers, each with the peers' grade in
        # the gradebook; a flagged plan has none (an instructor grades it).
        peers_graded = set(
            Grade.objects.filter(submission__course=course, origin="peers").values_list(
                "submission_id", flat=True
            )
        )
        assert peers_graded == {
            p.submission_id for p in PeerPlan.objects.filter(course=course, state="graded")
        }
        decided = PeerPlan.objects.filter(course=course).exclude(state="open").count()
        assert len(peers_graded) + len(listed) == decided
        transaction.set_rollback(True)
