"""Answering a lesson's check-yourself items in place (htmx), with feedback."""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from courses.models import Enrollment
from quizzes.calculated import Problem, answer_parse
from quizzes.models import QuizItem
from quizzes.services.answers import ItemResponse, item_answer, lesson_problem_for
from quizzes.services.review import grade_duration_ms

TEMPLATE = "quizzes/_check_yourself.html"
# The learner's own free-recall answer is shown back beside the model answer, never stored;
# the textarea holds at most this much.
OWN_ANSWER_MAX = 2000


def _own_answer(data: QueryDict) -> str:
    return data.get("own_answer", "").strip()[:OWN_ANSWER_MAX]


def _shown_at(data: QueryDict) -> int | None:
    """When the page showed the item (epoch ms), carried by its forms; None if absent or bad."""
    try:
        value = int(data.get("shown_at", ""))
    except ValueError:
        return None
    return value if value > 0 else None


def _item_for(request: AuthenticatedHttpRequest, item_id: int) -> QuizItem:
    # Only items of courses the user is enrolled in can be answered.
    return get_object_or_404(
        QuizItem.objects.select_related("lesson__module__course").prefetch_related("choices"),
        pk=item_id,
        lesson__module__course__enrollments__user=request.user,
        lesson__module__course__enrollments__role=Enrollment.Role.LEARNER,
    )


def _problem(request: AuthenticatedHttpRequest, item: QuizItem) -> Problem | None:
    """A calculated item's problem as the lesson shows it: the first review's before the first
    answer, then a practice draw that is never the next review's (one query)."""
    return lesson_problem_for(learner=request.user, item=item)


def _respond(request: AuthenticatedHttpRequest, item: QuizItem, context: dict) -> HttpResponse:  # type: ignore[type-arg]
    if "problem" not in context:
        context["problem"] = _problem(request, item)
    if request.htmx:
        return render(request, f"{TEMPLATE}#item_block", {"item": item, **context})
    # Without htmx (no JavaScript) the same block comes on a page of its own, so the feedback,
    # the error or the model answer is not lost in a redirect.
    return render(request, "quizzes/item_page.html", {"item": item, **context})


def _refused(request: AuthenticatedHttpRequest, item: QuizItem, error: str) -> HttpResponse:
    page = _respond(request, item, {"error": error, "token": request.POST.get("token") or None})
    page.status_code = 400
    return page


@require_GET
@login_required
def reveal(request: AuthenticatedHttpRequest, item_id: int) -> HttpResponse:
    """Free recall: show the model answer and the self-grade buttons."""
    item = _item_for(request, item_id)
    token = request.GET.get("token") or str(uuid.uuid4())
    context = {
        "revealed": True,
        "token": token,
        "own_answer": _own_answer(request.GET),
        "shown_at": _shown_at(request.GET),
    }
    return _respond(request, item, context)


@require_POST
@login_required
def answer(request: AuthenticatedHttpRequest, item_id: int) -> HttpResponse:
    item = _item_for(request, item_id)
    error = ""
    response: ItemResponse | None = None
    if item.kind == QuizItem.Kind.MULTIPLE_CHOICE:
        keys = frozenset(request.POST.getlist("choice"))
        if not keys:
            error = "Choose at least one answer."
        elif not keys <= {choice.key for choice in item.choices.all()}:
            # Only a hand-made request names a choice the item does not have: nothing is logged.
            return _refused(request, item, "choice: pick from the item's listed answers.")
        response = ItemResponse(choice_keys=keys)
    elif item.kind in (QuizItem.Kind.NUMERIC, QuizItem.Kind.CALCULATED):
        value = answer_parse(request.POST.get("value", ""))
        if value is None:
            error = "Enter a number, e.g. 11."
        response = ItemResponse(value=value)
    else:
        try:
            rating = int(request.POST.get("rating", ""))
        except ValueError:
            rating = 0
        if rating not in (1, 2, 3, 4):
            error = "Grade your recall: Again, Hard, Good or Easy."
        response = ItemResponse(self_rating=rating)
    token = request.POST.get("token") or None
    try:
        token_uuid = uuid.UUID(token) if token else None
    except ValueError:
        token_uuid = None
    if error or response is None:
        ctx = {
            "error": error,
            "token": token,
            "revealed": item.kind == QuizItem.Kind.FREE_RECALL,
            "own_answer": _own_answer(request.POST),
            "shown_at": _shown_at(request.POST),
        }
        return _respond(request, item, ctx)
    # Checked against the draw made here, as the lesson shows it: the numbers the page showed
    # are never read back from the form.
    problem = _problem(request, item)
    if item.kind == QuizItem.Kind.CALCULATED and problem is None:
        # No practice draw differs from the next review's: only that review may check it.
        return _respond(request, item, {"problem": None, "review_only": True, "token": token})
    now = timezone.now()
    result = item_answer(
        learner=request.user,
        item=item,
        response=response,
        now=now,
        card_token=token_uuid,
        duration_ms=grade_duration_ms(shown_at_ms=_shown_at(request.POST), now=now),
        problem=problem,
    )
    context = {
        "result": result,
        "value": response.value,
        "own_answer": _own_answer(request.POST),
        "problem": problem,
    }
    return _respond(request, item, context)
