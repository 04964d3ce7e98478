"""The calculator page keeps the parts every visitor sees alike (planner.calculator.page): a kept
page equals a fresh render, names no visitor, and never stands in for other inputs, another origin
or another catalogue."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.template.autoreload import reset_loaders
from django.test import Client

from planner.calculator.page import CalculatorParts, ProcessMemo, page_memo
from planner.calculator.parsing import DEFAULT_INPUTS
from planner.capacity.catalogue import PRICES_FILE_ENV
from tests.factories import PASSWORD

KINDS = ["serving", "training", "batch"]


@pytest.fixture(autouse=True)
def _fresh_memo() -> Iterator[None]:
    page_memo.clear()
    yield
    page_memo.clear()


def masked(html: str) -> str:
    """The page without what differs on every response: the CSRF token and the CSP nonce."""
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', 'name="csrfmiddlewaretoken"', html)
    html = re.sub(r'"X-CSRFToken": "[^"]+"', '"X-CSRFToken": ""', html)
    return re.sub(r'nonce="[^"]+"', 'nonce=""', html)


def logged_in(learner: object) -> Client:
    client = Client()
    client.login(email=learner.email, password=PASSWORD)  # type: ignore[attr-defined]
    return client


def max_users(html: str) -> str:
    match = re.search(r'id="max-users"[^>]*>(\d+)<', html)
    assert match is not None
    return match.group(1)


@pytest.mark.parametrize("kind", KINDS)
def test_a_kept_page_equals_a_fresh_render(client: Client, kind: str) -> None:
    fresh = client.get("/planner/", {"estimate": kind}).content.decode()
    assert page_memo.values(), "the first request keeps the default parts"
    kept = client.get("/planner/", {"estimate": kind}).content.decode()
    assert masked(kept) == masked(fresh)


@pytest.mark.django_db
@pytest.mark.parametrize("kind", KINDS)
def test_the_defaults_kept_equal_the_same_inputs_typed(learner: object, kind: str) -> None:
    """The default inputs written out in the query never use what is kept; the pages match."""
    client = logged_in(learner)
    client.get("/planner/", {"estimate": kind})
    kept = client.get("/planner/", {"estimate": kind}).content.decode()
    typed = client.get("/planner/", {"estimate": kind, **DEFAULT_INPUTS[kind]}).content.decode()
    assert masked(kept) == masked(typed)
    assert "Save as a workload card" in kept and 'name="csrfmiddlewaretoken"' in kept


@pytest.mark.django_db
def test_the_kept_parts_name_no_visitor(learner: object) -> None:
    client = logged_in(learner)
    html = client.get("/planner/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert token is not None
    kept = "".join(
        f"{v.form_html}{v.result_html}{v.share_query}" if isinstance(v, CalculatorParts) else v
        for v in page_memo.values()
    )
    assert "calc-form" in kept and 'id="max-users"' in kept
    assert token.group(1) not in kept and learner.email not in kept  # type: ignore[attr-defined]
    assert "csrfmiddlewaretoken" not in kept and "Save as a workload card" not in kept
    # An anonymous visitor after the learner gets the login link, not the learner's save form.
    anonymous = Client().get("/planner/").content.decode()
    assert "Save as a workload card" not in anonymous and "Log in</a> to save" in anonymous


def test_other_inputs_are_never_served_the_kept_result(client: Client) -> None:
    """24 − 14 − 3 GB leaves 7 GB: 11 users at 0.6 GB each (the default), 7 at 1 GB."""
    assert max_users(client.get("/planner/").content.decode()) == "11"
    inputs = {**DEFAULT_INPUTS["serving"], "kv_per_user_gb": "1"}
    page = client.get("/planner/", inputs).content.decode()
    assert max_users(page) == "7" and 'name="kv_per_user_gb" value="1"' in page
    fragment = client.get("/planner/", inputs, headers={"HX-Request": "true"}).content.decode()
    assert max_users(fragment) == "7"
    # An empty field is an input too: the form is not the defaults' any more.
    cleared = client.get("/planner/", {"estimate": "serving", "users": ""}).content.decode()
    assert 'name="gpu_memory_gb" value=""' in cleared and 'id="max-users"' not in cleared
    assert max_users(client.get("/planner/").content.decode()) == "11"


def test_errors_are_never_kept(client: Client) -> None:
    client.get("/planner/")
    html = client.get("/planner/", {"estimate": "serving", "gpu_memory_gb": "-3"}).content.decode()
    assert "GPU memory (GB): must be greater than zero." in html
    assert "must be greater than zero" not in client.get("/planner/").content.decode()


def test_each_origin_gets_its_own_share_link(client: Client) -> None:
    query = urlencode({"estimate": "serving", **DEFAULT_INPUTS["serving"]}).replace("&", "&amp;")
    first = client.get("/planner/").content.decode()
    other = client.get("/planner/", headers={"host": "localhost"}).content.decode()
    assert f'data-copy="http://testserver/planner/?{query}"' in first
    assert f'data-copy="http://localhost/planner/?{query}"' in other
    again = client.get("/planner/").content.decode()
    assert masked(again) == masked(first)


def test_htmx_fragment_of_the_defaults_still_names_the_visitor(client: Client) -> None:
    """The fragment is never kept: its out-of-band save-form input is for signed-in visitors."""
    client.get("/planner/")
    fragment = client.get("/planner/", headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in fragment and 'id="max-users"' in fragment
    assert 'id="card-query"' not in fragment


def test_a_new_catalogue_is_shown_at_once(
    client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deployment's price file replaces the catalogue: the kept parts go with the old one."""
    before = client.get("/planner/", {"estimate": "training"}).content.decode()
    assert "× $3.70 × 1 = $5.87" in before
    prices = tmp_path / "prices.toml"
    prices.write_text("[prices]\na100-80gb = 7.40\n")
    monkeypatch.setenv(PRICES_FILE_ENV, str(prices))
    after = client.get("/planner/", {"estimate": "training"}).content.decode()
    assert "× $7.40 × 1 = $11.74" in after and "$7.4/h" in after
    monkeypatch.delenv(PRICES_FILE_ENV)
    assert masked(client.get("/planner/", {"estimate": "training"}).content.decode()) == masked(
        before
    )


def test_the_memo_is_bounded_and_follows_the_template_loader() -> None:
    """A stream of keys (Host names) cannot grow it past its limit; a template loader reset (the
    development server's, when a template changes) drops what was rendered from the old one."""
    memo = ProcessMemo(limit=2)
    renders: list[str] = []

    def render(key: str) -> str:
        renders.append(key)
        return key.upper()

    for key in ["a", "b", "c", "a"]:
        assert memo.get(key, partial(render, key)) == key.upper()
    assert len(memo.values()) <= 2 and renders == ["a", "b", "c", "a"]
    assert memo.get("a", partial(render, "a")) == "A" and len(renders) == 4
    reset_loaders()
    assert memo.get("a", partial(render, "a")) == "A" and len(renders) == 5
