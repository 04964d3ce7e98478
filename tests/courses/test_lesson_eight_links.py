"""Lesson 8's three cards are the site's example cards: the lesson links exactly the calculator and
"Compare paths" pages the cards page opens for them, each link opens, and every figure the lesson
cites from a linked page is on that page at the lesson's rounding."""

from __future__ import annotations

import html
import re
from urllib.parse import urlencode

import pytest
from django.http import QueryDict
from django.test import Client

from planner.cards.services import workload_cards_seed_examples
from tests.courses.test_lesson_figures import FIGURES, LESSONS, W8, Calc, Figure, Option, shown

LESSON = LESSONS / W8
LINK_RE = re.compile(r"\]\((/planner/[^)\s]+)\)")
NUMBER_RE = re.compile(r"-?[0-9][0-9,]*(?:\.[0-9]+)?")


def lesson_links() -> list[str]:
    return LINK_RE.findall(LESSON.read_text())


def same_link(first: str, second: str) -> bool:
    """The same page with the same inputs, whatever their order."""
    (path_a, _, query_a), (path_b, _, query_b) = first.partition("?"), second.partition("?")
    return path_a == path_b and QueryDict(query_a) == QueryDict(query_b)


def cited_from(link: str) -> list[Figure]:
    """The lesson's figures read straight off the page `link` opens (no sum, ratio or scale):
    the calculator's for a calculator link, the comparison's for a "Compare paths" link."""
    out = []
    for figure in FIGURES:
        value = figure.value
        if figure.file != W8:
            continue
        if isinstance(value, Calc) and value.times == 1:
            page = f"/planner/?{value.query}"
        elif isinstance(value, Option):
            page = value.link
        else:
            continue
        if same_link(page, link):
            out.append(figure)
    return out


def page_numbers(client: Client, link: str) -> list[float]:
    response = client.get(link)
    assert response.status_code == 200, link
    text = html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode()))
    return [float(n.replace(",", "")) for n in NUMBER_RE.findall(text)]


def on_page(figure: Figure, numbers: list[float]) -> bool:
    """Some number on the page rounds to the lesson's figure at the lesson's decimals."""
    text = shown(figure).replace(",", "")
    decimals = len(text.split(".")[1]) if "." in text else 0
    cited = float(text)
    return any(round(n, decimals) == cited for n in numbers)


@pytest.mark.django_db
def test_lesson_eight_links_the_example_cards_pages() -> None:
    """Each example card's "Open in calculator" and "Compare paths" links are in the lesson."""
    links = set(lesson_links())
    cards = workload_cards_seed_examples()
    assert len(cards) == 3
    for card in cards:
        query = urlencode(card.inputs)
        for page in ("/planner/", "/planner/paths/"):
            assert any(same_link(f"{page}?{query}", link) for link in links), (page, card.name)


@pytest.mark.django_db
def test_the_cards_page_links_what_the_lesson_links(client: Client, learner: object) -> None:
    """The cards page a learner opens from the lesson shows these links, chat included."""
    from tests.planner.cards.test_cards import logged_in

    workload_cards_seed_examples()
    logged_in(client, learner)
    listing = html.unescape(client.get("/planner/cards/").content.decode())
    compare = re.findall(r'href="(/planner/paths/\?[^"]+)" data-testid="compare-paths"', listing)
    assert len(compare) == 3
    for link in compare:
        assert any(same_link(link, mine) for mine in lesson_links()), link


@pytest.mark.django_db
@pytest.mark.parametrize("link", lesson_links())
def test_each_lesson_eight_link_shows_the_figures_the_lesson_cites(
    client: Client, link: str
) -> None:
    numbers = page_numbers(client, link)
    cited = cited_from(link)
    assert cited, f"{link}: the lesson cites nothing from it"
    for figure in cited:
        assert on_page(figure, numbers), f"{link}: the lesson's {shown(figure)} ({figure.text!r})"


def test_every_card_in_lesson_eight_has_a_compare_paths_link() -> None:
    paths = [link for link in lesson_links() if link.startswith("/planner/paths/")]
    kinds = {re.search(r"estimate=(\w+)", link).group(1) for link in paths}  # type: ignore[union-attr]
    assert kinds == {"serving", "batch", "training"}
