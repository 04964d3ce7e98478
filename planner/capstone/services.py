"""Writes for the capstone worksheet: autosave a draft, submit an immutable version."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils.translation import gettext as _

from accounts.models import User
from courses.models import Course
from planner.capstone.check import plan_check, plan_estimate
from planner.capstone.comparison_label import recommended_label
from planner.capstone.outbox import CapstoneEmail, capstone_email_promise
from planner.capstone.peer_models import PeerSettings
from planner.capstone.peer_services import (
    peer_plan_open,
)
from planner.measured.runs import MeasuredAttachError, measured_for_link
from planner.models import (
    WORKSHEET_FIELDS,
    WORKSHEET_TEXT_FIELDS,
    CapstoneSubmission,
    CapstoneWorksheet,
    Grade,
    WorkloadCard,
)
from planner.paths.runs import comparison_for_link, comparison_forms_for_link, comparison_query

# A plan cannot be submitted without these: the grader needs to know what it is about and
# what it recommends.
REQUIRED_AT_SUBMIT = ("feature", "recommendation")


class SubmissionNotAllowed(Exception):
    """A new version is refused while the previous one awaits its grade."""


def worksheet_get_or_create(*, learner: User, course: Course) -> CapstoneWorksheet:
    worksheet, _created = CapstoneWorksheet.objects.get_or_create(learner=learner, course=course)
    return worksheet


def worksheet_content(worksheet: CapstoneWorksheet) -> dict[str, Any]:
    """The worksheet's fields as JSON-ready values (the content of a submitted version)."""
    return {name: getattr(worksheet, name) for name in WORKSHEET_FIELDS}


@transaction.atomic
def worksheet_autosave(
    *,
    worksheet: CapstoneWorksheet,
    data: dict[str, Any],
    workload_cards: Iterable[WorkloadCard] | None = None,
    measured_result: str = "",
) -> CapstoneWorksheet:
    """Save the draft's fields (only those given) and refresh the stored calculator result; a
    load test's result file, when given, is attached beside its prediction."""
    for name in WORKSHEET_FIELDS:
        if name in data:
            value = data[name]
            setattr(
                worksheet, name, "" if value is None and name in WORKSHEET_TEXT_FIELDS else value
            )
    if "measured_link" in data:
        worksheet.measured_link = data["measured_link"] or ""
    worksheet.full_clean(exclude=["learner", "course", "workload_cards"])
    worksheet.calculator_result = plan_estimate(worksheet_content(worksheet))
    _refresh_comparison(worksheet)
    _refresh_measured(worksheet, measured_result)
    worksheet.save()
    if workload_cards is not None:
        cards = list(workload_cards)
        if any(card.owner_id != worksheet.learner_id for card in cards):
            raise ValidationError({"workload_cards": _("Attach only your own workload cards.")})
        worksheet.workload_cards.set(cards)
    return worksheet


def _refresh_comparison(worksheet: CapstoneWorksheet) -> None:
    """Run the attached path comparison again when its link changed (or clear it)."""
    pasted = worksheet.paths_query.strip()
    if pasted == worksheet.paths_comparison.get("pasted", ""):
        return
    comparison = comparison_for_link(pasted) if pasted else None
    if comparison is None:
        worksheet.paths_comparison = {}
        return
    # Our own page's address, whatever host or scheme was pasted: the page shows it as a link.
    link = f"{reverse('planner:paths')}?{comparison_query(pasted)}"
    stored = comparison.to_dict()
    worksheet.paths_comparison = {
        **stored,
        "link": link,
        "pasted": pasted,
        "recommended_label": recommended_label(stored),
    }


def worksheet_attach_comparison(*, learner: User, course: Course, link: str) -> CapstoneWorksheet:
    """Attach a path comparison (its link, as the comparison page gives it) to the learner's
    worksheet for the course, creating the draft if there is none; the comparison runs now."""
    link = link.strip()
    max_length = CapstoneWorksheet._meta.get_field("paths_query").max_length or 2000
    if not link or len(link) > max_length:
        raise ValidationError({"paths_query": _("The comparison's link is missing or too long.")})
    if not comparison_forms_for_link(link).is_valid():
        raise ValidationError({"paths_query": _("The comparison's inputs are refused.")})
    with transaction.atomic():
        worksheet, _created = CapstoneWorksheet.objects.select_for_update().get_or_create(
            learner=learner, course=course
        )
        return worksheet_autosave(worksheet=worksheet, data={"paths_query": link})


def _refresh_measured(worksheet: CapstoneWorksheet, result: str) -> None:
    """Attach a load test's result on the deployment the measured link names (run again only
    when the file or the link changed); an emptied link removes the attachment."""
    link = worksheet.measured_link.strip()
    if not link:
        if result.strip():
            raise ValidationError(
                {
                    "measured_link": _(
                        "Give the deployment the load test ran on (the measured page's link)."
                    )
                }
            )
        worksheet.measured_comparison = {}
        return
    if not result.strip():
        return
    digest = hashlib.sha256(f"{link}\n{result}".encode()).hexdigest()
    if digest == worksheet.measured_comparison.get("digest"):
        return
    try:
        comparison = measured_for_link(link, result)
    except MeasuredAttachError as err:
        raise ValidationError({"measured_result": str(err)}) from None
    query = link.split("?", 1)[1] if "?" in link else link
    worksheet.measured_comparison = {
        **comparison.to_dict(),
        "link": f"{reverse('planner:measured')}?{query}",
        "digest": digest,
    }


def worksheet_can_submit(*, worksheet: CapstoneWorksheet) -> tuple[bool, str]:
    """A first version any time; a new one once the latest version's grade is released."""
    latest = worksheet.submissions.order_by("-version").first() if worksheet.pk else None
    if latest is None:
        return True, ""
    released = Grade.objects.filter(submission=latest, status=Grade.Status.RELEASED).exists()
    if released:
        return True, ""
    return False, _(
        "Version %(version)d is waiting for its grade. You can resubmit once it is released."
    ) % {"version": latest.version}


def worksheet_submit(*, worksheet: CapstoneWorksheet, now: datetime) -> CapstoneSubmission:
    """Freeze the draft as a new immutable version and run the automatic check on it."""
    with transaction.atomic():
        # Lock the draft so two submits at once cannot both take the same version number.
        worksheet = (
            CapstoneWorksheet.objects.select_for_update()
            .select_related("course")
            .get(pk=worksheet.pk)
        )
        allowed, reason = worksheet_can_submit(worksheet=worksheet)
        if not allowed:
            raise SubmissionNotAllowed(reason)
        content = worksheet_content(worksheet)
        missing = {
            name: _("This field is required to submit.")
            for name in REQUIRED_AT_SUBMIT
            if not str(content.get(name) or "").strip()
        }
        if missing:
            raise ValidationError(missing)
        latest = worksheet.submissions.order_by("-version").values_list("version", flat=True)
        version = (latest.first() or 0) + 1
        due_at = worksheet.course.capstone_due_at
        cards = [
            {
                "id": card.pk,
                "name": card.name,
                "kind": card.kind,
                "model_name": card.model_name,
                "inputs": card.inputs,
                "result": card.result,
            }
            for card in worksheet.workload_cards.order_by("name")
        ]
        submission = CapstoneSubmission.objects.create(
            worksheet=worksheet,
            learner_id=worksheet.learner_id,
            course_id=worksheet.course_id,
            version=version,
            content=content,
            workload_cards=cards,
            calculator_result=plan_estimate(content),
            paths_comparison=worksheet.paths_comparison,
            measured_comparison=worksheet.measured_comparison,
            check_result=plan_check(
                content, worksheet.paths_comparison, worksheet.measured_comparison
            ).to_dict(),
            submitted_at=now,
            due_at=due_at,
            is_late=due_at is not None and now > due_at,
        )
        if version > 1:
            # A resubmission is promised an acknowledgement, written with the version itself.
            capstone_email_promise(
                kind=CapstoneEmail.Kind.RESUBMISSION_RECEIVED, submission=submission, now=now
            )
        if PeerSettings.objects.filter(course_id=worksheet.course_id, enabled=True).exists():
            peer_plan_open(submission=submission, now=now)
        return submission
