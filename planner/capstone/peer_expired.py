"""A peer's link to an assignment given back after its lease: a page saying it expired and what
to do next, answered 410 Gone (the assignment was, and will not be again), not a 404."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render

from accounts.http import AuthenticatedHttpRequest
from planner.capstone.peer_assignment import ASSIGNMENT_LEASE
from planner.capstone.peer_models import PeerAssessment
from planner.capstone.peer_selectors import assessment_for_assessor, expired_assignment_for


def assessment_or_expired(
    request: AuthenticatedHttpRequest, assessment_id: int
) -> PeerAssessment | HttpResponse:
    """The assessor's own peer assessment; else, when it was theirs and expired, the expired
    page (410); else a 404 (another's id, or an id that never was)."""
    assessment = assessment_for_assessor(assessor=request.user, assessment_id=assessment_id).first()
    return assessment if assessment is not None else expired_page(request, assessment_id)


def expired_page(request: AuthenticatedHttpRequest, assessment_id: int) -> HttpResponse:
    """The page saying the assessor's assignment expired and what to do next (410); a 404 when
    no assignment of theirs expired under that id."""
    expired = expired_assignment_for(assessor=request.user, assessment_id=assessment_id)
    if expired is None:
        raise Http404
    context = {
        "expired": expired,
        "course": expired.course,
        "lease_hours": int(ASSIGNMENT_LEASE.total_seconds() // 3600),
        # A save posted after the expiry: its levels are not kept, and the page says so.
        "lost_levels": request.method == "POST",
    }
    return render(request, "planner/capstone/peer_expired.html", context, status=410)
