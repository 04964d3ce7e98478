"""The capstone with a load test attached: the worksheet keeps it beside its prediction, the
automatic check reports the ratios and flags the targets the run missed, and instructors see how
often and by how much the calculator was optimistic across submitted plans."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from courses.models import Course
from planner.capstone.check import plan_check
from planner.capstone.measured_selectors import measured_against_predicted
from planner.capstone.services import worksheet_autosave, worksheet_submit
from planner.models import CapstoneWorksheet
from tests.factories import CourseFactory, EnrollmentFactory, UserFactory
from tests.planner.factories import GOOD_PLAN, course_taught_by, submission_for, worksheet_for
from tests.planner.measured.results import CHAT, engine_ratio, sample

CHAT_TTFT = (
    f"{engine_ratio('chat-serving-vllm.json', CHAT):.2f}"  # the engine's, as the pages round it
)

pytestmark = pytest.mark.django_db

CHAT_LINK = "/planner/measured/?gpu=l40s&model=llama-3.1-8b&context_tokens=8192&ttft_target_ms=2000"
NIM_LINK = (
    "http://elsewhere.example/planner/measured/?gpu=h100-sxm&model=llama-3.3-70b"
    "&tensor_parallel=2&weight_precision=fp8&kv_precision=fp8"
)


def form_data(**overrides: object) -> dict[str, object]:
    data = {k: ("" if v is None else v) for k, v in GOOD_PLAN.items()}
    data.update(overrides)
    return data


def test_a_load_test_is_attached_checked_and_frozen_with_the_version(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    save = reverse("capstone:worksheet_save", args=[course.slug])
    plan = form_data(
        concurrency=50, measured_link=CHAT_LINK, measured_result=sample("chat-serving-vllm.json")
    )
    assert client.post(save, plan).status_code == 302
    worksheet = CapstoneWorksheet.objects.get(learner=learner, course=course)
    assert worksheet.measured_comparison["measured"]["completed"] == 200
    assert worksheet.measured_comparison["link"].startswith("/planner/measured/?gpu=l40s")
    page = client.get(reverse("capstone:worksheet", args=[course.slug])).content.decode()
    assert "Attached: a vllm bench serve run of 200 requests." in page
    assert f"first token {CHAT_TTFT}" in page
    # Saving again without the file keeps the attachment.
    assert client.post(save, form_data(concurrency=50, measured_link=CHAT_LINK)).status_code == 302
    worksheet.refresh_from_db()
    assert worksheet.measured_comparison["ratios"]["ttft_ms"] > 2

    response = client.post(
        reverse("capstone:worksheet_submit", args=[course.slug]),
        form_data(concurrency=50, measured_link=CHAT_LINK),
    )
    version = client.get(response.url).content.decode()
    assert 'data-testid="check-measured"' in version
    assert 'data-code="measured_misses_target"' in version
    assert "p95 time to first token 2,600 ms, over the 2,000 ms the plan needs" in version
    assert 'data-code="measured_below_peak"' in version  # 20 in flight, the plan's peak is 50
    assert 'data-code="engine_optimistic"' in version and "2.9× worse" in version
    submission = worksheet.submissions.get()
    assert submission.measured_comparison["ratios"] == worksheet.measured_comparison["ratios"]


def test_a_broken_result_names_the_field_and_saves_nothing(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    save = reverse("capstone:worksheet_save", args=[course.slug])
    bad = client.post(
        save, form_data(measured_link=CHAT_LINK, measured_result='{"completed": 3, "mean_tt')
    )
    html = bad.content.decode()
    assert bad.status_code == 400
    assert "Load test result (JSON): result: is not JSON" in html
    assert not CapstoneWorksheet.objects.filter(learner=learner).exists()
    no_link = client.post(save, form_data(measured_result=sample("chat-serving-vllm.json")))
    assert no_link.status_code == 400
    assert "Give the deployment the load test ran on" in no_link.content.decode()
    no_gpu = client.post(
        save,
        form_data(
            measured_link="/planner/measured/?gpu=warp",
            measured_result=sample("chat-serving-vllm.json"),
        ),
    )
    assert no_gpu.status_code == 400 and "gpu:" in no_gpu.content.decode()


def test_emptying_the_link_removes_the_attachment(client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory()
    EnrollmentFactory(user=learner, course=course)
    client.force_login(learner)
    save = reverse("capstone:worksheet_save", args=[course.slug])
    client.post(
        save,
        form_data(
            measured_link=NIM_LINK,
            measured_result=sample("nim-llama-3.3-70b-h100-tp2-c25-vllm.json"),
        ),
    )
    worksheet = CapstoneWorksheet.objects.get(learner=learner, course=course)
    # Another site's address is kept as our own page's link.
    assert worksheet.measured_comparison["link"].startswith("/planner/measured/?gpu=h100-sxm")
    client.post(save, form_data(measured_link=""))
    worksheet.refresh_from_db()
    assert worksheet.measured_comparison == {}


def test_the_check_reports_ratios_and_a_run_that_meets_its_targets_is_not_flagged() -> None:
    from planner.capacity import ServingInputs, default_catalogue
    from planner.capacity.measured import measured_comparison, read_result

    cat = default_catalogue()
    base = ServingInputs(
        accelerator=cat.accelerator("l40s"), model=cat.model("llama-3.1-8b"), ttft_target_ms=5000
    )
    measured = measured_comparison(read_result(sample("chat-serving-vllm.json")), base).to_dict()
    check = plan_check({**GOOD_PLAN, "concurrency": 20}, None, measured)
    assert check.measured["ratios"] == measured["ratios"]
    assert "measured_misses_target" not in check.codes
    assert "measured_below_peak" not in check.codes


def measured_submission(course: Course, link: str, file: str) -> None:
    learner = UserFactory()
    worksheet = worksheet_autosave(
        worksheet=worksheet_for(learner, course),
        data={"measured_link": link},
        measured_result=sample(file),
    )
    worksheet_submit(worksheet=worksheet, now=timezone.now())


def test_instructors_see_how_often_and_by_how_much_the_engine_was_optimistic(
    client, instructor
) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(instructor)
    measured_submission(course, CHAT_LINK, "chat-serving-vllm.json")
    measured_submission(course, NIM_LINK, "nim-llama-3.3-70b-h100-tp2-c25-vllm.json")
    submission_for(UserFactory(), course)  # no load test: not counted
    with CaptureQueriesContext(connection) as queries:
        rows = {r.metric: r for r in measured_against_predicted(course_ids=[course.pk])}
    assert len(queries) == 1
    ttft = rows["ttft_ms"]
    assert (
        ttft.plans == 2 and ttft.optimistic == 2
    )  # the chat sample and NIM's run: both slower than predicted
    assert ttft.worst_factor == pytest.approx(
        engine_ratio("chat-serving-vllm.json", CHAT), rel=1e-3
    )
    assert rows["output_tokens_per_s"].optimistic == 0  # both runs beat the predicted throughput
    client.force_login(instructor)
    html = client.get(reverse("capstone:grading_queue")).content.decode()
    assert 'data-testid="measured-summary-table"' in html
    assert "2 (100 %)" in html and f"{CHAT_TTFT}×" in html


def test_without_measured_plans_the_summary_says_how_they_arrive(client, instructor) -> None:  # type: ignore[no-untyped-def]
    course = course_taught_by(instructor)
    submission_for(UserFactory(), course)
    client.force_login(instructor)
    html = client.get(reverse("capstone:grading_queue")).content.decode()
    assert 'data-testid="measured-summary-empty"' in html
