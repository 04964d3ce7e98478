"""The top bar on a desktop and on a phone: the current section is marked, the bar is one row on a
desktop and wraps whole words on a phone, and every section is reachable from the keyboard."""

from __future__ import annotations

import pytest

from tests.conftest import login_in_browser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 375])
def test_top_bar_marks_the_section_and_shows_every_section(page, learner, width: int) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": width, "height": 800})
    login_in_browser(page, learner.email)
    page.goto("/review/stats/")
    nav = page.get_by_role("navigation", name="Main")
    current = nav.locator('[aria-current="page"]')
    assert current.count() == 1
    assert current.inner_text() == "Statistics"

    def centre_in_view(locator) -> bool:  # type: ignore[no-untyped-def]
        b = locator.bounding_box()
        return b is not None and 0 <= b["x"] + b["width"] / 2 <= width

    assert centre_in_view(current)

    box = nav.bounding_box()
    assert box is not None and box["height"] <= (60 if width > 1000 else 170), box
    # Every section is whole on screen: none is cut at the edge of a sideways-scrolling row.
    for link in nav.get_by_role("link").all():
        b = link.bounding_box()
        assert b is not None and b["x"] >= 0 and b["x"] + b["width"] <= width, link.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= width

    # Tabbing through the bar reaches 'Preferences' and brings it into view where the row scrolls.
    page.keyboard.press("Tab")  # the skip link
    page.keyboard.press("Tab")  # the brand
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Dashboard"
    assert centre_in_view(nav.get_by_role("link", name="Dashboard"))
    for _ in range(20):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent.trim()") == "Preferences":
            break
    link = nav.get_by_role("link", name="Preferences")
    assert page.evaluate("document.activeElement.textContent.trim()") == "Preferences"
    link_box = link.bounding_box()
    assert link_box is not None and 0 <= link_box["x"] + link_box["width"] / 2 <= width
    page.keyboard.press("Enter")
    page.wait_for_url("**/accounts/preferences/")
    assert nav.locator('[aria-current="page"]').inner_text() == "Preferences"


def test_log_out_stays_in_view_at_200_percent_text(page, instructor) -> None:  # type: ignore[no-untyped-def]
    """WCAG 1.4.4 and 1.4.10: with text at 200 % the instructor's sections wrap onto rows, and Log
    out stays on screen."""
    page.set_viewport_size({"width": 1280, "height": 800})
    login_in_browser(page, instructor.email)
    # The browser's own text size at 200 % (16 px -> 32 px), as a reader sets it: rem-based
    # media queries follow it too, so the bar takes its phone layout.
    page.context.new_cdp_session(page).send(
        "Page.setFontSizes", {"fontSizes": {"standard": 32, "fixed": 26}}
    )
    page.goto("/dashboard/")
    assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == "32px"
    button = page.get_by_role("button", name="Log out")
    box = button.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1280, box
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
