"""The accessibility statement reads on a phone and a desktop, light and dark (the page fixture
runs axe-core and the Nu HTML checker over it), and is one Tab-walk from the front page's footer."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1280, 375])
def test_the_statement_is_reached_from_the_footer(page, width: int) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": width, "height": 800})
    page.goto("/")
    link = page.get_by_role("contentinfo").get_by_role("link", name="Accessibility")
    link.focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/accessibility/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Accessibility statement")
    expect(page.get_by_role("heading", name="Report a problem")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
