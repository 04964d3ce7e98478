"""Pages reached from a digest email (one-click unsubscribe, the signed recall prompt) and the
staff page that shows how today's digests went.

The email's links work without a login: a signed, time-limited token is the permission, and it
names one learner (unsubscribe) or one recall schedule (prompt). A GET never changes state, since
mail scanners follow links; changes happen only on POST.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from accounts.decorators import instructor_required
from accounts.http import AuthenticatedHttpRequest
from accounts.models import User
from quizzes.calculated import ANSWER_MAX_LENGTH, answer_parse
from quizzes.models import RecallSchedule, ReviewLog
from quizzes.selectors.preview import grade_previews
from quizzes.selectors.problems import item_problem
from quizzes.selectors.queue import QueueCard
from quizzes.services.review import StaleCard, grade_duration_ms, review_grade
from reminders.emails import review_session_url
from reminders.links import LinkInvalid, prompt_token_schedule, unsubscribe_token_learner
from reminders.outbox import reminders_unsubscribe
from reminders.selectors import digest_counts, digests_visible_to, utc_day_bounds


class PromptGradeForm(forms.Form):
    rating = forms.TypedChoiceField(
        label=_("How well did you recall it?"), choices=ReviewLog.Rating.choices, coerce=int
    )
    card_token = forms.UUIDField(label=_("Card token"), widget=forms.HiddenInput)
    # Epoch milliseconds when the page showed the prompt: the grade's duration comes from it.
    shown_at = forms.IntegerField(
        required=False, min_value=0, max_value=2**53, widget=forms.HiddenInput
    )
    # A calculated item's number, checked against the problem drawn on the server.
    value = forms.CharField(label=_("Your answer"), required=False, max_length=ANSWER_MAX_LENGTH)

    def clean_value(self) -> float | None:
        text = self.cleaned_data["value"]
        if not text.strip():
            return None
        value = answer_parse(text)
        if value is None:
            raise forms.ValidationError(_("Enter a number, e.g. 11.5."))
        return value


def signed_link[T](
    resolve: Callable[..., T],
) -> Callable[
    [Callable[[HttpRequest, T], HttpResponse]], Callable[[HttpRequest, str], HttpResponse]
]:
    """A view reached by an email's signed link: `resolve(token=...)` turns the URL's token into
    what it names, which the view receives instead of the token; a bad, tampered or expired
    token is the "link invalid" page (400) and never reaches the view."""

    def decorate(
        view: Callable[[HttpRequest, T], HttpResponse],
    ) -> Callable[[HttpRequest, str], HttpResponse]:
        @wraps(view)
        def wrapper(request: HttpRequest, token: str) -> HttpResponse:
            try:
                target = resolve(token=token)
            except LinkInvalid:
                return render(request, "reminders/link_invalid.html", status=400)
            return view(request, target)

        return wrapper

    return decorate


# RFC 8058: mail providers POST `List-Unsubscribe=One-Click` with no cookie and no CSRF token; the
# signed token in the URL is the permission, so the view is exempt from CSRF.
@csrf_exempt
@require_http_methods(["GET", "POST"])
@signed_link(unsubscribe_token_learner)
def unsubscribe(request: HttpRequest, learner: User) -> HttpResponse:
    if request.method == "POST":
        reminders_unsubscribe(learner=learner, now=timezone.now())
        return render(request, "reminders/unsubscribe.html", {"learner": learner, "done": True})
    return render(request, "reminders/unsubscribe.html", {"learner": learner, "done": False})


@require_http_methods(["GET", "POST"])
@signed_link(prompt_token_schedule)
def prompt(request: HttpRequest, schedule: RecallSchedule) -> HttpResponse:
    """One recall prompt from a digest: answer it, reveal the answer, grade it with a POST. A
    calculated item shows the problem drawn for the learner at the schedule's review (the one
    the digest showed) and checks their number against it, drawn again on the server."""
    now = timezone.now()
    problem = item_problem(learner_id=schedule.learner_id, item=schedule.item, review=schedule.reps)
    context: dict[str, object] = {
        "problem": problem,
        "schedule": schedule,
        "item": schedule.item,
        "review_url": review_session_url(),
        "due": schedule.due <= now,
        # What each grade button would schedule next, as the review session shows it.
        "previews": grade_previews(
            card=QueueCard(item=schedule.item, schedule=schedule, choices=[]), now=now
        ),
    }
    if request.method == "POST":
        form = PromptGradeForm(request.POST)
        if form.is_valid():
            value = form.cleaned_data["value"] if problem is not None else None
            expected = (
                problem.solution.answer if problem is not None and value is not None else None
            )
            try:
                log = review_grade(
                    learner=schedule.learner,
                    schedule_id=schedule.pk,
                    card_token=form.cleaned_data["card_token"],
                    rating=form.cleaned_data["rating"],
                    now=now,
                    source=ReviewLog.Source.EMAIL,
                    duration_ms=grade_duration_ms(
                        shown_at_ms=form.cleaned_data["shown_at"], now=now
                    ),
                    answer_value=value,
                    expected_value=expected,
                )
            except StaleCard:
                schedule.refresh_from_db()
                context.update(stale=True, due=schedule.due <= now)
            else:
                schedule.refresh_from_db()
                context.update(graded=log, next_due=schedule.due)
                if value is not None and problem is not None:
                    context.update(value=value, verdict=problem.is_correct(value))
            return render(request, "reminders/prompt.html", context)
        context["form"] = form
        return render(request, "reminders/prompt.html", context, status=400)
    context["form"] = PromptGradeForm(
        initial={"card_token": schedule.card_token, "shown_at": int(now.timestamp() * 1000)}
    )
    return render(request, "reminders/prompt.html", context)


@require_GET
@instructor_required
def status(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Counts of today's digests (UTC day) by state, the latest failures and the latest rows."""
    now = timezone.now()
    start, end = utc_day_bounds(now=now)
    visible = digests_visible_to(user=request.user)
    return render(
        request,
        "reminders/status.html",
        {
            "counts": digest_counts(start=start, end=end, digests=visible),
            "day": start.date(),
            "failures": visible.filter(status="failed").select_related("learner")[:20],
            "recent": visible.select_related("learner")[:30],
        },
    )
