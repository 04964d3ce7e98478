"""The review session: one card at a time through htmx, reveal, grade, undo."""

from __future__ import annotations

import math
import time
import uuid
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.text import Truncator
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap, retarget

from accounts.http import AuthenticatedHttpRequest
from quizzes.calculated import answer_parse, problem_for
from quizzes.forms import GradeForm
from quizzes.models import QuizItem, RecallSchedule, ReviewLog
from quizzes.selectors.cards import QueueCard, card_for, enrolled_item_for
from quizzes.selectors.carried_counts import MAX_LENGTH as COUNTS_MAX_LENGTH
from quizzes.selectors.carried_counts import (
    CarriedCounts,
    counted_now,
    counts_after_grade,
    counts_dumps,
    counts_loads,
    due_queue_carried,
)
from quizzes.selectors.preview import grade_previews, scheduling_for_card
from quizzes.selectors.problems import AnswerInvalid, card_problem, graded_answer
from quizzes.selectors.queue import due_queue_for, next_card_at
from quizzes.services.review import (
    Grade,
    StaleCard,
    grade_duration_ms,
    review_grade,
    schedule_start,
)
from quizzes.services.undo import NothingToUndo, UndoRaced, review_undo

# The empty state reloads itself when the next card can be shown; a browser timer holds a day.
MAX_REFRESH_SECONDS = 86_400


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def _card_token(card: QueueCard) -> uuid.UUID:
    # A new item gets a fresh token per showing; a scheduled card carries its current one.
    return card.schedule.card_token if card.schedule is not None else uuid.uuid4()


def _render_panel(
    request: AuthenticatedHttpRequest, *, notice: str = "", carried: CarriedCounts | None = None
) -> HttpResponse:
    """The whole panel: today's counts, the next card (or why there is none), undo. With
    `carried` counts (a grade's), the queue is not counted again unless they run out."""
    now = timezone.now()
    found = due_queue_carried(learner=request.user, now=now, carried=carried) if carried else None
    if found is not None:
        queue, carried = found
    else:
        queue = due_queue_for(learner=request.user, now=now)
        carried = counted_now(learner=request.user, counts=queue.counts, now=now)
    card = queue.card
    context: dict[str, Any] = {
        "queue": queue,
        "card": card,
        "notice": notice,
        "shortcuts": request.user.review_shortcuts_enabled,
    }
    if card is not None:
        context["problem"] = card_problem(card=card, learner_id=request.user.pk)
    if card is None:
        # The empty state says why: not started, today's limits reached, or all caught up.
        next_at = next_card_at(learner=request.user, now=now)
        context["next_due"] = next_at
        context["now"] = now
        if next_at is not None and next_at > now:
            wait = math.ceil((next_at - now).total_seconds())
            context["refresh_seconds"] = min(max(wait, 1), MAX_REFRESH_SECONDS)
    else:
        context["token"] = _card_token(card)
        context["shown_at"] = int(time.time() * 1000)
        # The counts ride with the card, through the reveal, to its grade.
        context["counts"] = counts_dumps(carried, learner_id=request.user.pk)
    template = "quizzes/session.html#panel" if request.htmx else "quizzes/session.html"
    return render(request, template, context)


def _render_revealed(
    request: AuthenticatedHttpRequest,
    *,
    card: QueueCard,
    token: uuid.UUID,
    shown_at: int | None,
    counts: str,
    answer: str = "",
) -> HttpResponse:
    """The card with its answer and grade buttons. Through htmx only the card is swapped, so
    the queue is not counted again; without JavaScript the whole page comes back."""
    scheduling = scheduling_for_card(card=card, learner_id=request.user.pk)
    context: dict[str, Any] = {
        "card": card,
        "revealed": True,
        "token": token,
        "shown_at": shown_at or int(time.time() * 1000),
        "previews": grade_previews(
            card=card,
            now=timezone.now(),
            learner_id=request.user.pk,
            scheduling=scheduling,
            learner=request.user,
        ),
        "shortcuts": request.user.review_shortcuts_enabled,
        # Passed on as the panel signed them; the grade checks them.
        "counts": counts if len(counts) <= COUNTS_MAX_LENGTH else "",
    }
    problem = card_problem(card=card, learner_id=request.user.pk)
    if problem is not None:
        # Drawn again here for the learner's review, never read back from the page; the grade
        # form carries the typed number, and the grade draws again to log it beside the answer.
        value = answer_parse(answer)
        context.update(
            problem=problem,
            value=value,
            verdict=problem.is_correct(value) if value is not None else None,
            answer=f"{value!r}" if value is not None else "",
        )
    if request.htmx:
        return render(request, "quizzes/session.html#card", context)
    context["queue"] = due_queue_for(learner=request.user, now=timezone.now(), with_card=False)
    return render(request, "quizzes/session.html", context)


@require_GET
@login_required
def session(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The next card; with `reveal=1` and the card's ids, the same card with its answer."""
    if request.GET.get("reveal"):
        schedule_id = _int_or_none(request.GET.get("schedule"))
        item_id = _int_or_none(request.GET.get("item"))
        try:
            token = uuid.UUID(request.GET.get("token", ""))
            card = card_for(learner=request.user, schedule_id=schedule_id, item_id=item_id)
        except (ValueError, RecallSchedule.DoesNotExist, QuizItem.DoesNotExist) as exc:
            raise Http404("No such card.") from exc
        if card.schedule is not None and card.schedule.card_token != token:
            response = _render_panel(
                request, notice="That card was graded elsewhere; here is the next."
            )
            if request.htmx:
                # The reveal swaps only the card; the next one replaces the whole panel.
                reswap(retarget(response, "#review-panel"), "innerHTML")
            return response
        return _render_revealed(
            request,
            card=card,
            token=token,
            shown_at=_int_or_none(request.GET.get("shown_at")),
            counts=request.GET.get("counts", ""),
            answer=request.GET.get("value", ""),
        )
    return _render_panel(request)


@require_POST
@login_required
def grade(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = GradeForm(request.POST)
    if not form.is_valid():
        field, errors = next(iter(form.errors.items()))  # the first bad field, in form order
        message = "Choose a grade from 1 to 4." if field == "rating" else f"{field}: {errors[0]}"
        return HttpResponse(message, status=400)
    posted = form.cleaned_data
    now = timezone.now()
    duration_ms = grade_duration_ms(shown_at_ms=posted["shown_at"], now=now)
    schedule_id = posted["schedule_id"]
    item_id = posted["item_id"]
    notice = ""
    log: ReviewLog | None = None
    try:
        answer_value, expected_value = graded_answer(
            learner=request.user, text=posted["answer"], schedule_id=schedule_id, item_id=item_id
        )
    except AnswerInvalid as exc:
        return HttpResponse(f"answer: {exc}", status=400)
    except (RecallSchedule.DoesNotExist, QuizItem.DoesNotExist) as exc:
        raise Http404("No such card.") from exc
    grade: Grade = {
        "card_token": posted["card_token"],
        "rating": posted["rating"],
        "now": now,
        "duration_ms": duration_ms,
        "source": ReviewLog.Source.REVIEW,
        "answer_value": answer_value,
        "expected_value": expected_value,
    }
    try:
        if schedule_id is not None:
            log = review_grade(learner=request.user, schedule_id=schedule_id, **grade)
        elif item_id is not None:
            # Not only new items: a retried first grade must reach schedule_start to be replayed.
            item = enrolled_item_for(learner=request.user, item_id=item_id)
            log = schedule_start(learner=request.user, item=item, **grade).log
        else:
            return HttpResponse("No card given.", status=400)
    except (RecallSchedule.DoesNotExist, QuizItem.DoesNotExist) as exc:
        raise Http404("No such card.") from exc
    except StaleCard:
        notice = "That card was already graded elsewhere; here is the next."
    if not request.htmx:
        if notice:
            messages.info(request, notice)
        return redirect("quizzes:session")
    # The panel's counts with this grade applied, rather than the queue counted again.
    carried = None
    if log is not None:
        carried = counts_loads(posted["counts"], learner=request.user, now=now)
        if carried is not None:
            carried = counts_after_grade(carried, log=log)
    return _render_panel(request, notice=notice, carried=carried)


@require_POST
@login_required
def undo(request: AuthenticatedHttpRequest) -> HttpResponse:
    now = timezone.now()
    try:
        log = review_undo(learner=request.user, now=now)
        prompt = log.item.prompt
        if log.item.kind == QuizItem.Kind.CALCULATED:
            # The problem as it was graded: drawn at the review the undo returns to.
            review = int(log.state_before.get("reps", 0))
            prompt = problem_for(log.item, learner_id=request.user.pk, review=review).prompt
        notice = _("Undid your grade of “%(prompt)s”.") % {"prompt": Truncator(prompt).words(12)}
    except NothingToUndo:
        notice = _("There is no grade of today left to undo.")
    except UndoRaced:
        notice = _("That grade was already undone in another tab or window.")
    if not request.htmx:
        messages.info(request, notice)
        return redirect("quizzes:session")
    return _render_panel(request, notice=notice)
