"""The comparison page in a learner's words: one recommendation string, the defaults it assumed
shown in their fields, the percentiles beside the means, the frontier, the update's status, and
"Attach to my capstone"."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse

from planner.capacity.paths.label import path_words, recommendation_label
from planner.capstone.check import plan_check
from planner.models import CapstoneWorksheet
from planner.paths.forms import comparison_forms
from planner.paths.page import option_row
from planner.paths.runs import DEFAULT_INPUTS, form_comparison
from tests.factories import CourseFactory, EnrollmentFactory

CHAT = {
    "estimate": "serving",
    "model": "llama-3.1-8b",
    "weight_precision": "bf16",
    "context_tokens": "8192",
    "users": "20",
    "ttft_target_ms": "2000",
    "requests_per_day": "1000",
}
CHAT_LINK = "/planner/paths/?" + "&".join(f"{k}={v}" for k, v in CHAT.items())


def _text(html: str) -> str:
    text = unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))
    return re.sub(r"\s+([.:,])", r"\1", text)


def test_one_recommendation_string_counts_every_device() -> None:
    assert recommendation_label({"name": "NVIDIA T4", "count": 4}) == "4 × NVIDIA T4"
    # Replicas included: the option's devices win over one replica's count.
    assert recommendation_label({"name": "NVIDIA T4", "count": 4, "devices": 8}) == "8 × NVIDIA T4"
    assert recommendation_label({"name": "Managed model API", "count": 1}) == "Managed model API"
    assert recommendation_label({"name": "CPU server"}) == "CPU server"
    assert recommendation_label(None) == ""
    assert path_words("managed_api") == "Managed API" and path_words("gpu") == "GPU"


def test_the_check_and_the_worksheet_say_what_the_comparison_says() -> None:
    t4 = {"path": "gpu", "accelerator": "t4", "count": 4, "name": "NVIDIA T4", "cost_usd": 33.6}
    comparison = {
        "options": [
            {**t4, "meets": True, "devices": 4},
            {
                "path": "cpu",
                "accelerator": "cpu-server",
                "count": 1,
                "name": "CPU server",
                "meets": False,
                "limiter": "compute",
                "reason": "slow",
                "cost_usd": 38.4,
            },
        ],
        "recommended": t4,
        "excluded": [],
    }
    check = plan_check({"recommendation": "cpu"}, comparison)
    assert check.comparison["recommended_label"] == "4 × NVIDIA T4"
    rejected = next(f for f in check.findings if f.code == "recommendation_rejected")
    assert rejected.message.endswith("It recommends 4 × NVIDIA T4.")
    assert "(gpu)" not in rejected.message


def test_percentiles_show_beside_the_means_when_the_estimate_gives_them() -> None:
    comparison = form_comparison(comparison_forms("serving", DEFAULT_INPUTS["serving"]))
    assert comparison is not None
    option = next(o for o in comparison.options if o.accelerator == "h100-sxm" and o.count == 1)
    plain = option_row("serving", option)
    assert plain.cells[0][0].startswith("mean ")  # the first token's mean, no percentiles given
    given = replace(
        option,
        figures={
            **option.figures,
            "ttft_ms_p50": 150.0,
            "ttft_ms_p95": 420.0,
            "ttft_ms_p99": 900.0,
            "itl_ms_p50": 8.0,
            "itl_ms_p95": 12.5,
            "itl_ms_p99": 20.0,
        },
    )
    row = option_row("serving", given)
    assert row.cells[0][1:] == ["p50 150", "p95 420", "p99 900"]
    assert row.cells[1][1:] == ["p50 8.0", "p95 12.5", "p99 20.0"]
    assert row.label == recommendation_label(option)


@pytest.mark.django_db
def test_every_assumed_default_is_in_its_field_in_words(client: Client) -> None:
    query = {k: v for k, v in CHAT.items() if k != "requests_per_day"}
    html = client.get(
        reverse("planner:paths"), {**query, "exclude": "managed_api"}
    ).content.decode()
    field = re.search(r'<input[^>]*name="requests_per_day"[^>]*>', html)
    assert field and 'value="10000"' in field.group(0)
    assert 'data-testid="assumed-requests_per_day"' in html
    # A derived default shows as its field's placeholder.
    prompt = re.search(r'<input[^>]*name="prompt_tokens"[^>]*>', html)
    assert prompt and 'placeholder="7,936 (assumed)"' in prompt.group(0)
    listed = html.split('data-testid="assumptions"', 1)[1].split("</ul>", 1)[0]
    names = re.findall(r"<strong>(.*?)</strong>", listed)
    assert names and not [name for name in names if "_" in name]
    assumed = _text(listed)
    for identifier in ("requests_per_day", "gpu_memory_utilization", "decode_batch"):
        assert identifier not in assumed
    assert "Requests per day: 10,000" in assumed
    result = _text(html.split('id="paths-result"', 1)[1].split('class="share-url"', 1)[0])
    assert "managed_api" not in result  # the link's address keeps it, the words do not
    assert "Excluded by your constraints: the Managed API." in result


@pytest.mark.django_db
def test_the_frontier_and_its_table_are_on_the_page(client: Client) -> None:
    html = client.get(reverse("planner:paths"), {**CHAT, "exclude": "managed_api"}).content.decode()
    frontier = html.split('data-testid="frontier"', 1)[1]
    assert 'class="frontier-chart"' in frontier
    assert frontier.count('data-testid="operating-row"') == 1
    assert "The targets pick" in _text(frontier)


@pytest.mark.django_db
def test_an_update_is_announced_in_a_status_beside_the_form(client: Client) -> None:
    response = client.get(
        reverse("planner:paths"),
        {**CHAT, "requests_per_day": "2000000"},
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    status = re.search(r'<p id="paths-status"[^>]*>.*?</p>', html, re.S)
    assert status is not None
    assert 'role="status"' in status.group(0) and 'data-hx-swap-oob="true"' in status.group(0)
    assert "a day at 2,000,000 requests" in _text(status.group(0))


@pytest.mark.django_db
def test_attach_puts_the_comparison_on_the_learners_worksheet(client: Client, learner) -> None:  # type: ignore[no-untyped-def]
    course = CourseFactory(title="GPUs")
    EnrollmentFactory(course=course, user=learner)
    client.force_login(learner)
    page = client.get(CHAT_LINK + "&exclude=managed_api").content.decode()
    assert 'action="/capstone/attach-comparison/"' in page
    label = _text(re.search(r'data-testid="recommended">(.*?)<', page).group(1)).strip()  # type: ignore[union-attr]
    response = client.post(
        reverse("capstone:attach_comparison"), {"link": CHAT_LINK + "&exclude=managed_api"}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "capstone:worksheet", kwargs={"course_slug": course.slug}
    )
    worksheet = CapstoneWorksheet.objects.get(learner=learner, course=course)
    assert worksheet.paths_comparison["recommended_label"] == label
    shown = client.get(response["Location"]).content.decode()
    assert f"Comparison attached: it recommends {label}." in _text(shown)
    assert f"The attached comparison recommends {label}." in _text(shown)


@pytest.mark.django_db
def test_attach_is_a_post_with_csrf_for_a_signed_in_learner(learner) -> None:  # type: ignore[no-untyped-def]
    EnrollmentFactory(user=learner)
    url = reverse("capstone:attach_comparison")
    anonymous = Client()
    assert anonymous.post(url, {"link": CHAT_LINK}).status_code == 302  # to the login page
    assert not CapstoneWorksheet.objects.exists()
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(learner)
    assert strict.post(url, {"link": CHAT_LINK}).status_code == 403
    assert strict.get(url).status_code == 405
    assert not CapstoneWorksheet.objects.exists()


@pytest.mark.django_db
def test_attach_refuses_bad_links_and_asks_which_course(client: Client, learner) -> None:  # type: ignore[no-untyped-def]
    first, second = CourseFactory(title="GPUs"), CourseFactory(title="TPUs")
    EnrollmentFactory(course=first, user=learner)
    client.force_login(learner)
    url = reverse("capstone:attach_comparison")
    refused = client.post(url, {"link": "/planner/paths/?users=-5"}, follow=True)
    assert "inputs are refused" in refused.content.decode()
    assert CapstoneWorksheet.objects.filter(learner=learner).exclude(paths_query="").count() == 0
    EnrollmentFactory(course=second, user=learner)
    choose = client.post(url, {"link": "javascript:alert(1)//?" + CHAT_LINK.split("?", 1)[1]})
    html = choose.content.decode()
    assert 'data-testid="attach-choose"' in html and "javascript:" not in html
    other = CourseFactory(title="Not mine")
    assert client.post(url, {"link": CHAT_LINK, "course": other.slug}).status_code == 404
    done = client.post(url, {"link": CHAT_LINK, "course": second.slug})
    assert done.status_code == 302
    assert CapstoneWorksheet.objects.get(learner=learner, course=second).paths_comparison["options"]


@pytest.mark.django_db
def test_a_plan_of_several_replicas_counts_every_device_in_its_label(client: Client) -> None:
    """2,000,000 chat requests a day need several replicas: the headline counts all devices."""
    query = {**CHAT, "requests_per_day": "2000000", "exclude": ["managed_api"]}
    comparison = form_comparison(comparison_forms("serving", query))
    assert comparison is not None and comparison.recommended is not None
    best = comparison.recommended
    assert best.replicas > 1
    html = client.get(reverse("planner:paths"), query).content.decode()
    label = _text(re.search(r'data-testid="recommended">(.*?)<', html).group(1)).strip()  # type: ignore[union-attr]
    assert label == f"{best.devices:,} × {best.name}"
    assert f"{best.replicas} replicas of" in _text(html)


@pytest.mark.django_db
def test_a_choice_the_training_comparison_assumed_is_said_under_its_field(client: Client) -> None:
    html = client.get(reverse("planner:paths"), {"estimate": "training"}).content.decode()
    assert not re.search(r"<select[^>]*placeholder", html)  # a select has no placeholder
    assert 'data-testid="assumed-adam_bytes"' in html
    mfu = re.search(r'<input[^>]*name="mfu"[^>]*>', html)
    assert mfu and 'placeholder="0.4 (assumed)"' in mfu.group(0)


@pytest.mark.django_db
def test_the_headline_break_even_is_the_one_its_how_works_out(client: Client) -> None:
    html = client.get(reverse("planner:paths"), CHAT).content.decode()
    text = _text(html)
    headline = re.search(r"Break-even: ([\d,]+) requests a day", text)
    how = re.search(r"= ([\d,]+) requests/day", text)
    assert headline and how and headline.group(1) == how.group(1)
    assert "checked at p95" in text
