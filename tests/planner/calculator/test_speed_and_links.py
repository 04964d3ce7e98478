"""The speed model's figures where a learner reads them (the page, its roofline chart, the CLI), the
batch job sized from the hardware, and prefilled links to each estimate that round-trip."""

from __future__ import annotations

import json
import re
from html import unescape
from io import StringIO
from itertools import pairwise
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from planner.calculator.charts import roofline_chart

pytestmark = pytest.mark.django_db

CHAT = {
    "estimate": "serving",
    "gpu": "h100-sxm",
    "model": "llama-3.1-8b",
    "users": "64",
    "context_tokens": "4096",
    "prompt_tokens": "1000",
}


def api(client: Client, kind: str, params: dict[str, str]) -> dict:
    response = client.get(reverse(f"planner:api_{kind}"), params)
    assert response.status_code == 200, response.content
    return response.json()


def test_the_page_shows_prediction_bound_aggregate_and_first_token(client: Client) -> None:
    data = api(client, "serving", CHAT)
    page = client.get(reverse("planner:calculator"), CHAT).content.decode()
    rate = re.search(r'data-testid="decode-rate">(.*?)</p>', page, re.S)
    assert rate is not None
    text = re.sub(r"<[^>]+>", "", rate[1])
    assert f"About {data['decode_tokens_per_s']:.1f} tokens/s per user" in text
    assert f"at most {data['decode_tokens_per_s_upper_bound']:.1f} by the roofline" in text
    assert f"{data['aggregate_tokens_per_s']:.0f} tokens/s in all" in text
    assert f"First token after about {data['time_to_first_token_ms']:.0f} ms" in text
    # The prediction is below the bound it is kept beside.
    assert data["decode_tokens_per_s"] < data["decode_tokens_per_s_upper_bound"]


def test_queueing_inputs_lengthen_the_first_token_on_the_page_and_api(client: Client) -> None:
    alone = api(client, "serving", CHAT)
    burst = api(client, "serving", {**CHAT, "burst_arrivals": "16"})
    assert burst["time_to_first_token_ms"] > alone["time_to_first_token_ms"]
    busy = api(client, "serving", {**CHAT, "arrival_rate_per_s": "20"})
    assert busy["decode_tokens_per_s"] < alone["decode_tokens_per_s"]


def test_the_roofline_chart_draws_the_curve_the_users_point_and_a_table(client: Client) -> None:
    data = api(client, "serving", CHAT)
    page = client.get(reverse("planner:calculator"), CHAT).content.decode()
    figure = re.search(r'<figure class="roofline-figure".*?</details>', page, re.S)
    assert figure is not None
    html = figure[0]
    assert '<title id="roofline-title">' in html and '<desc id="roofline-desc">' in html
    assert 'aria-labelledby="roofline-title roofline-desc"' in html
    rows = re.findall(r"<tr[^>]*><th scope=\"row\">(\d+)</th>", html)
    assert [int(b) for b in rows] == [p["batch"] for p in data["speed_curve"]]
    point = re.search(r'data-testid="user-point" cx="([\d.]+)" cy="([\d.]+)"', html)
    assert point is not None
    assert f"Your batch of {data['decode_batch']}" in unescape(html)


def test_the_chart_puts_batches_on_a_log_axis_and_marks_the_compute_bound_batch() -> None:
    curve = [
        {
            "batch": b,
            "decode_tokens_per_s": 100 / (1 + b / 64),
            "decode_tokens_per_s_upper_bound": 150 / (1 + b / 128),
            "aggregate_tokens_per_s": b * 100 / (1 + b / 64),
        }
        for b in (1, 2, 4, 8, 16, 32, 64, 128, 256)
    ]
    chart = roofline_chart(
        {
            "speed_curve": curve,
            "decode_batch": 16,
            "decode_tokens_per_s": 80.0,
            "compute_bound_batch": 64,
        }
    )
    assert chart is not None
    xs = [float(p.split(",")[0]) for p in chart.predicted_path.split()]
    steps = [b - a for a, b in pairwise(xs)]
    assert max(steps) - min(steps) <= 0.2  # each doubling is the same width: a log₂ axis
    assert xs[0] == chart.plot_left and xs[-1] == chart.plot_right
    assert chart.compute_bound_x == xs[6]  # batch 64
    assert chart.user_x == xs[4]  # batch 16
    ys = [float(p.split(",")[1]) for p in chart.predicted_path.split()]
    assert ys == sorted(ys)  # per-stream speed falls as the batch grows (y grows downwards)
    bound_ys = [float(p.split(",")[1]) for p in chart.upper_bound_path.split()]
    assert all(b <= p for b, p in zip(bound_ys, ys, strict=True))  # the bound above the line
    assert "compute-bound at a batch of 64" in chart.description


def test_no_chart_without_a_curve() -> None:
    assert roofline_chart({"speed_curve": []}) is None
    assert roofline_chart({}) is None
    one = {"batch": 1, "decode_tokens_per_s": 5.0, "decode_tokens_per_s_upper_bound": 6.0}
    assert roofline_chart({"speed_curve": [one]}) is None


def test_the_cli_summary_shows_the_speed_figures_and_curve() -> None:
    out = StringIO()
    call_command(
        "capacity",
        "serving",
        "--gpu",
        "h100-sxm",
        "--model",
        "llama-3.1-8b",
        "--users",
        "64",
        "--prompt-tokens",
        "1000",
        "--burst-arrivals",
        "8",
        stdout=out,
    )
    text = out.getvalue()
    for label in (
        "Decode per stream, predicted (tokens/s):",
        "Decode per stream, roofline upper bound (tokens/s):",
        "Aggregate decode (tokens/s):",
        "Time to first token (ms):",
        "Decode speed against batch",
        "  batch 1: ",
    ):
        assert label in text, label


def test_the_batch_job_is_sized_from_the_gpu_and_model(client: Client) -> None:
    """The nightly embedding card without a measured rate: the GPU and the model set it; a
    measured rate still wins."""
    job = {"items": "50000", "window_hours": "2", "tokens_per_item": "300"}
    from_hardware = api(client, "batch", {**job, "gpu": "l4", "model": "llama-3.1-8b"})
    assert from_hardware["items_per_s_per_worker"] > 0
    assert from_hardware["workers_needed"] >= 1
    faster = api(client, "batch", {**job, "gpu": "h100-sxm", "model": "llama-3.1-8b"})
    assert faster["items_per_s_per_worker"] > from_hardware["items_per_s_per_worker"]
    smaller = api(client, "batch", {**job, "gpu": "l4", "params_b": "0.335"})
    assert smaller["items_per_s_per_worker"] > from_hardware["items_per_s_per_worker"]
    measured = api(
        client, "batch", {**job, "gpu": "l4", "model": "llama-3.1-8b", "items_per_s": "10"}
    )
    assert measured["items_per_s_per_worker"] == 10
    out = StringIO()
    call_command(
        "capacity", "batch", *_flags({**job, "gpu": "l4", "model": "llama-3.1-8b"}), stdout=out
    )
    assert f"Rate per worker (items/s): {from_hardware['items_per_s_per_worker']}" in out.getvalue()


def _flags(params: dict[str, str]) -> list[str]:
    return [a for k, v in params.items() for a in ("--" + k.replace("_", "-"), v)]


LINKS = [
    {
        "estimate": "serving",
        "gpu": "l4",
        "model": "mistral-7b",
        "weight_precision": "fp8",
        "context_tokens": "8192",
        "users": "12",
        "prompt_tokens": "2000",
        "output_tokens": "300",
        "burst_arrivals": "4",
        "arrival_rate_per_s": "0.5",
        "intermediate_size": "14336",
    },
    {
        "estimate": "training",
        "model": "llama-3.1-8b",
        "method": "qlora",
        "batch_size": "4",
        "seq_len": "4096",
        "checkpointing": "true",
        "gpu": "l40s",
        "steps": "500",
    },
    {
        "estimate": "batch",
        "items": "50000",
        "window_hours": "2",
        "gpu": "cpu-server",
        "params_b": "0.11",
        "tokens_per_item": "256",
        "retry_margin": "0.2",
    },
]


@pytest.mark.parametrize("link", LINKS, ids=[link["estimate"] for link in LINKS])
def test_a_prefilled_link_opens_its_estimate_and_round_trips(
    client: Client, link: dict[str, str]
) -> None:
    """A lesson's link (query keys = the form's field names) opens that estimate with every
    value in its field, and the result's share link is the same inputs again."""
    page = client.get(reverse("planner:calculator"), link).content.decode()
    kind = link["estimate"]
    assert re.search(rf'<a href="[^"]*estimate={kind}" aria-current="page"', page)
    for name, value in link.items():
        if name == "estimate":
            continue
        field = re.search(
            rf'<(input|select)[^>]*(?:name="{name}")[^>]*>(.*?</select>)?', page, re.S
        )
        assert field is not None, name
        if field[1] == "input":
            assert f'value="{value}"' in field[0] or 'type="checkbox"' in field[0], name
        else:
            assert f'value="{value}" selected' in field[0], name
    assert 'data-testid="calc-errors"' not in page
    share = re.search(r'data-testid="share-link"[^>]*href="([^"]+)"', page)
    assert share is not None
    shared = dict(parse_qsl(urlsplit(unescape(share[1])).query))
    assert shared == link
    # Opening the share link gives the same figures, byte for byte.
    again = client.get(unescape(share[1])).content.decode()
    figures = re.search(r'<table class="figures">(.*?)</table>', page, re.S)
    assert figures is not None and figures[1] in again
    assert json.loads(client.get(reverse(f"planner:api_{kind}"), link).content)


def test_the_batch_page_says_where_the_workers_rate_comes_from(client: Client) -> None:
    job = {"estimate": "batch", "items": "50000", "window_hours": "2", "tokens_per_item": "300"}
    page = client.get(reverse("planner:calculator"), {**job, "gpu": "l4", "params_b": "0.335"})
    text = re.sub(r"<[^>]+>", "", page.content.decode())
    assert re.search(r"Each worker does about [\d.]+ items/s on the NVIDIA L4, from its", text)
    measured = client.get(
        reverse("planner:calculator"), {**job, "gpu": "l4", "params_b": "0.335", "items_per_s": "7"}
    )
    text = re.sub(r"<[^>]+>", "", measured.content.decode())
    assert "Each worker does 7.0 items/s." in text  # measured: no "about", no hardware


def test_the_page_marks_the_batch_where_decode_turns_compute_bound(client: Client) -> None:
    """A short context on a fast GPU: past some batch the step's FLOPs outlast its reads."""
    many = {
        "estimate": "serving",
        "gpu": "h200",
        "model": "llama-3.1-8b",
        "weight_precision": "fp8",
        "users": "1000",
        "context_tokens": "300",
    }
    bound = api(client, "serving", many)["compute_bound_batch"]
    assert isinstance(bound, int) and 1 < bound < 1000
    page = client.get(reverse("planner:calculator"), many).content.decode()
    assert 'data-testid="compute-bound-line"' in page
    assert f'data-testid="compute-bound-batch">{bound}<' in page
    assert f"Decode turns compute-bound at a batch of {bound:,}." in page
