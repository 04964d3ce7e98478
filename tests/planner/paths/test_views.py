"""The comparison page: every input in the URL, the table before the chart, errors at the field."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse


def test_the_page_opens_on_the_course_chat_card(client: Client) -> None:
    response = client.get(reverse("planner:paths"))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="recommended"' in html
    assert html.index('data-testid="meeting-table"') < html.index('data-testid="cost-chart"')
    assert "Break-even" in html
    assert "<details>" in html  # each figure's formula on demand


def test_htmx_renders_the_result_alone_and_pushes_the_link(client: Client) -> None:
    response = client.get(
        reverse("planner:paths"),
        {
            "estimate": "serving",
            "model": "llama-3.1-8b",
            "users": "20",
            "context_tokens": "8192",
            "requests_per_day": "1000",
            "exclude": "managed_api",
        },
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>" not in html
    assert 'data-testid="deploy-command"' in html
    pushed = response.headers["HX-Push-Url"]
    assert pushed.startswith(reverse("planner:paths"))
    assert "exclude=managed_api" in pushed and "requests_per_day=1000" in pushed


def test_bad_input_says_which_field(client: Client) -> None:
    response = client.get(
        reverse("planner:paths"), {"estimate": "serving", "users": "-5", "requests_per_day": "x"}
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="paths-errors"' in html
    # Each error names its field in the learner's words, as the field's label does.
    assert "Concurrent users (target): must not be negative." in html
    assert "Requests per day:" in html


def test_batch_and_training_tabs_compare_their_cards(client: Client) -> None:
    batch = client.get(reverse("planner:paths"), {"estimate": "batch"}).content.decode()
    assert "Cost per run (USD)" in batch and "timed run" in batch
    training = client.get(reverse("planner:paths"), {"estimate": "training"}).content.decode()
    assert "GB per device" in training and "a short training run" in training


def test_the_table_leads_with_the_recommendation_the_runner_up_and_each_paths_best(
    client: Client,
) -> None:
    """Four to six rows up front, each once; all the options (55 + 22) fold away."""
    html = client.get(
        reverse("planner:paths"),
        {"estimate": "serving", "model": "llama-3.1-8b", "users": "20", "context_tokens": "8192"},
    ).content.decode()
    lead = html.split('data-testid="headline-table"', 1)[1].split("</table>", 1)[0]
    assert lead.count("<tr data-path=") <= 6
    assert 'data-role="Recommended"' in lead and 'data-role="Runner-up"' in lead
    assert 'data-role="Best TPU"' in lead
    rest = html.split('data-testid="all-options"', 1)[1]
    assert 'data-accelerator="h100-sxm" data-count="1"' in rest
    assert 'data-accelerator="h100-sxm" data-count="2"' in rest
    # One "How" per table, none per row.
    assert html.count("<summary>How these") == 3
