"""The measured page (paste or upload, htmx), its JSON API, and the ways to it: the path
comparison's load test and a serving workload card."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from planner.capacity.measured import MAX_RESULT_BYTES
from tests.planner.measured.results import CHAT as CHAT_INPUTS
from tests.planner.measured.results import engine_ratio, sample, text, vllm_current

CHAT = {"gpu": "l40s", "model": "llama-3.1-8b", "context_tokens": "8192", "ttft_target_ms": "2000"}


def test_the_empty_page_says_what_to_do_and_offers_samples(client: Client) -> None:
    response = client.get(reverse("planner:measured"), {"gpu": "l40s", "users": "20"})
    html = response.content.decode()
    assert response.status_code == 200
    assert 'data-testid="measured-empty"' in html
    assert 'data-testid="sample-chat-vllm"' in html
    assert 'value="20"' in html  # a card's inputs arrive filled in


def test_a_sample_fills_the_form_with_its_file_and_deployment(client: Client) -> None:
    html = client.get(reverse("planner:measured"), {"sample": "nim-70b"}).content.decode()
    assert "688.69" in html and 'value="h100-sxm"' in html


def test_htmx_post_of_a_pasted_file_renders_the_comparison_alone(client: Client) -> None:
    response = client.post(
        reverse("planner:measured_compare"),
        {**CHAT, "result": sample("chat-serving-vllm.json")},
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    assert response.status_code == 200 and "<h1>" not in html
    assert (
        f'data-testid="largest-ratio">{engine_ratio("chat-serving-vllm.json", CHAT_INPUTS):.2f}<'
        in html
    )
    assert 'data-testid="gap-chart"' in html and 'data-testid="measured-table"' in html
    assert "Queueing" in html and "misses" in html


def test_an_uploaded_file_replaces_the_paste_box(client: Client) -> None:
    upload = SimpleUploadedFile("result.json", sample("chat-serving-guidellm.json").encode())
    response = client.post(reverse("planner:measured_compare"), {**CHAT, "result_file": upload})
    assert response.status_code == 200
    assert "<h1>Measured beside predicted</h1>" in response.content.decode()
    assert "guidellm" in response.content.decode()


def test_a_broken_file_is_the_fields_error_and_a_400(client: Client) -> None:
    response = client.post(
        reverse("planner:measured_compare"), {**CHAT, "result": '{"completed": 3, "mean_ttft'}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert 'data-testid="error-result">is not JSON' in html


def test_an_oversized_upload_is_refused_naming_the_limit(client: Client) -> None:
    upload = SimpleUploadedFile("big.json", b" " * (MAX_RESULT_BYTES + 1))
    response = client.post(reverse("planner:measured_compare"), {**CHAT, "result_file": upload})
    assert response.status_code == 400
    assert "at most 4 MiB are read" in response.content.decode()


@pytest.mark.parametrize("api", [False, True])
def test_a_paste_past_the_form_limit_names_the_field_and_the_upload(
    client: Client, settings, api: bool
) -> None:  # type: ignore[no-untyped-def]
    pasted = " " * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    url = reverse("planner:api_measured" if api else "planner:measured_compare")
    response = client.post(url, {**CHAT, "result": pasted})
    assert response.status_code == 400
    if api:
        errors = response.json()["errors"]
        assert list(errors) == ["result"] and "upload the file instead" in errors["result"][0]
    else:
        html = response.content.decode()
        assert 'data-testid="error-result">is ' in html and "upload the file instead" in html


def test_the_api_takes_the_file_as_an_object_and_answers_the_clis_json(client: Client) -> None:
    body = {**CHAT, "result": vllm_current()}
    response = client.post(
        reverse("planner:api_measured"), json.dumps(body), content_type="application/json"
    )
    data = response.json()
    assert response.status_code == 200
    assert data["measured"]["concurrency"] == 16
    assert (
        data["ratios"]["ttft_ms"]
        == data["measured"]["ttft_ms"]["mean"] / data["predicted"]["ttft_ms"]["mean"]
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**CHAT, "result": text(vllm_current(mean_itl_ms=-2))}, "result"),
        ({**CHAT, "result": [1, 2]}, "result"),
        ({"result": vllm_current(), "gpu": "warp-drive"}, "gpu"),
        ({"result": vllm_current(), "tensor_parallel": "0", **{"gpu": "l40s"}}, "tensor_parallel"),
    ],
)
def test_the_api_refuses_naming_the_field(
    client: Client, body: dict[str, object], field: str
) -> None:
    response = client.post(
        reverse("planner:api_measured"), json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_the_api_refuses_a_body_that_is_not_an_object(client: Client) -> None:
    response = client.post(reverse("planner:api_measured"), "[1]", content_type="application/json")
    assert response.status_code == 400 and "body" in response.json()["errors"]


def test_the_path_comparison_links_here_and_prints_a_command_that_writes_the_file(
    client: Client,
) -> None:
    response = client.get(
        reverse("planner:paths"),
        {**CHAT, "estimate": "serving", "users": "20", "exclude": "managed_api"},
    )
    html = response.content.decode()
    assert 'data-testid="compare-measured"' in html
    assert "/planner/measured/?" in html
    for flag in (
        "--save-result --result-filename load-test-c20.json",
        "--ignore-eos",
        "--percentile-metrics ttft,tpot,itl --metric-percentiles 50,95,99",
    ):
        assert flag in html


@pytest.mark.django_db
def test_a_serving_workload_card_links_here(client: Client, learner) -> None:  # type: ignore[no-untyped-def]
    from planner.cards.services import workload_cards_seed_examples

    workload_cards_seed_examples()
    client.force_login(learner)
    html = client.get(reverse("planner:cards")).content.decode()
    assert html.count('data-testid="compare-measured"') == 1  # the chat card, not batch or training
