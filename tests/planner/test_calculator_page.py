"""Parts of the calculator page written in Python, exactly as the template loops wrote them: a
select's options (rendered once per set of choices, the typed value selected) and the figures."""

from __future__ import annotations

from django.test import Client

from planner.calculator.rendering import figure_rows, select_options


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
    assert html.count(" selected>") == 5  # GPU, model; 3 "not given" options
    assert '<option value="h100-sxm" selected>NVIDIA H100 SXM (80 GB)</option>' in html
    assert '<option value="llama-3.1-8b" selected>' in html
    assert '<option value="" selected>not given</option>' in html


def test_figures_print_as_the_template_did() -> None:
    """None as a dash, numbers as a template prints them, text escaped; the words shown elsewhere
    (formulas, warnings, assumptions) left out, and a batch's `items` kept."""
    html = figure_rows(
        {"items": 50000, "fits": None, "rate": 0.6, "note": "<b>", "formulas": [1], "warnings": []}
    )
    cell = '<tr><th scope="row"><code>{}</code></th><td>{}</td></tr>'
    assert html == "".join(
        cell.format(k, v) for k, v in [("items", "50000"), ("fits", "—"), ("rate", "0.6")]
    ) + cell.format("note", "&lt;b&gt;")
