"""A peer's link to an assignment given back after its lease: 410 Gone with a page saying it
expired and what to do (ask for another plan, or go back), not a 404; another's id stays 404."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from planner.capstone.peer_assignment import (
    ASSIGNMENT_LEASE,
    peer_assign,
    peer_assignments_expire,
)
from planner.capstone.peer_models import ExpiredPeerAssignment, PeerAssessment
from planner.models import Criterion
from tests.planner.capstone.peer_helpers import learners_with_plans, peer_course

pytestmark = pytest.mark.django_db


def taken_and_left(course, learner):  # type: ignore[no-untyped-def]
    """The learner takes a plan and walks away; the beat's sweep gives it back."""
    now = timezone.now() - ASSIGNMENT_LEASE * 2
    assessment = peer_assign(assessor=learner, course=course, now=now)
    assert assessment is not None
    assert peer_assignments_expire(course=course, now=timezone.now()) == 1
    return assessment


def test_an_expired_assignment_says_so_with_what_to_do(client) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    learners = learners_with_plans(course, 3)
    assessment = taken_and_left(course, learners[0])
    assert not PeerAssessment.objects.filter(pk=assessment.pk).exists()
    client.force_login(learners[0])
    page = client.get(reverse("capstone:peer_assessment", args=[assessment.pk]))
    assert page.status_code == 410
    body = page.content.decode()
    assert "This assignment has expired" in body and "held for 8 hours" in body
    assert f'action="{reverse("capstone:peer_assign", args=[course.slug])}"' in body
    assert f'href="{reverse("capstone:peer", args=[course.slug])}"' in body
    assert "was not saved" not in body
    # Its button gives a plan to assess.
    taken = client.post(reverse("capstone:peer_assign", args=[course.slug]))
    fresh = PeerAssessment.objects.get(assessor=learners[0], completed_at__isnull=True)
    assert taken["Location"] == reverse("capstone:peer_assessment", args=[fresh.pk])
    assert client.get(taken["Location"]).status_code == 200


def test_levels_posted_after_the_expiry_are_refused_on_the_same_page(client) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    learners = learners_with_plans(course, 3)
    assessment = taken_and_left(course, learners[0])
    client.force_login(learners[0])
    levels = {
        f"level_{c.pk}": str(c.levels.get(key="partial").pk)
        for c in Criterion.objects.filter(rubric__course=course)
    }
    answer = client.post(
        reverse("capstone:peer_assessment_save", args=[assessment.pk]),
        {**levels, "comment": "Late."},
    )
    assert answer.status_code == 410
    assert "Your assessment was not saved" in answer.content.decode()
    assert not PeerAssessment.objects.filter(assessor=learners[0]).exists()


def test_another_learners_or_an_unknown_id_is_still_a_404(client) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    learners = learners_with_plans(course, 3)
    assessment = taken_and_left(course, learners[0])
    client.force_login(learners[1])
    assert client.get(reverse("capstone:peer_assessment", args=[assessment.pk])).status_code == 404
    client.force_login(learners[0])
    assert client.get(reverse("capstone:peer_assessment", args=[10**12])).status_code == 404


def test_an_assignment_past_its_lease_but_not_yet_given_back_can_still_be_assessed(client) -> None:  # type: ignore[no-untyped-def]
    course = peer_course()
    learners = learners_with_plans(course, 3)
    now = timezone.now() - ASSIGNMENT_LEASE * 2
    assessment = peer_assign(assessor=learners[0], course=course, now=now)
    assert assessment is not None
    client.force_login(learners[0])
    assert client.get(reverse("capstone:peer_assessment", args=[assessment.pk])).status_code == 200
    # Swept twice: one record of the expiry.
    peer_assignments_expire(course=course, now=timezone.now())
    peer_assignments_expire(course=course, now=timezone.now())
    assert ExpiredPeerAssignment.objects.filter(assessment_id=assessment.pk).count() == 1
