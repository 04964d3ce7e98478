"""Every warning the engine can emit has a title on the page, so none shows as its raw code."""

from __future__ import annotations

import pytest

from planner.calculator.rendering import WARNING_TITLES, readable_warnings
from planner.capacity.results import WarningCode


@pytest.mark.parametrize("code", list(WarningCode))
def test_every_engine_warning_code_has_a_title(code: WarningCode) -> None:
    assert str(code) in WARNING_TITLES, f"rendering.WARNING_TITLES lacks {code!s}"
    title = readable_warnings({"warnings": [{"code": str(code), "message": "m"}]})[0]["title"]
    assert title and title != str(code) and title != str(code).replace("_", " ")


def test_no_title_for_a_code_the_engine_no_longer_has() -> None:
    assert set(WARNING_TITLES) <= {str(c) for c in WarningCode}


def test_an_mla_model_shows_the_latent_cache_title(client) -> None:  # type: ignore[no-untyped-def]
    html = client.get(
        "/planner/", {"estimate": "serving", "gpu": "h100-sxm", "model": "deepseek-v2-lite"}
    ).content.decode()
    assert 'data-code="mla_latent_cache"' in html
    assert f"<strong>{WARNING_TITLES['mla_latent_cache']}.</strong>" in html
