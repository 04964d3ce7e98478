"""The calculator page's form: a select's options are rendered once per set of choices, with the
typed value selected, exactly as the row template wrote them."""

from __future__ import annotations

from django.test import Client

from planner.calculator.rendering import select_options


def test_options_mark_the_typed_choice_and_escape_their_text() -> None:
    html = select_options([("", "custom"), ("a&b", "A <b>")], "a&b")
    assert html == (
        '<option value="">custom</option><option value="a&amp;b" selected>A &lt;b&gt;</option>'
    )
    assert " selected" not in select_options([("x", "X")], "not a choice")
    assert select_options([], "") == ""


def test_a_shared_link_keeps_the_picked_gpu_and_model_selected(client: Client) -> None:
    html = client.get(
        "/planner/?estimate=serving&gpu=h100-sxm&model=llama-3.1-8b&overhead_gb=3"
    ).content.decode()
    assert html.count(" selected>") == 4  # GPU, model, and the two precisions' "not given"
    assert '<option value="h100-sxm" selected>NVIDIA H100 SXM (80 GB)</option>' in html
    assert '<option value="llama-3.1-8b" selected>' in html
    assert '<option value="" selected>not given</option>' in html
