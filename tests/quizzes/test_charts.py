"""The statistics charts' bars and figures table, written in Python."""

from __future__ import annotations

from quizzes.charts import bar_chart


def test_bars_and_rows_are_escaped_and_one_per_value():
    """One rect per value (none drawn tall for "no data"), labels only every `label_every`, and
    every label and figure escaped in the SVG and in the table."""
    chart = bar_chart(
        values=[3.0, None, 1.0],
        labels=["<b>Mon</b>", "Tue", "Wed"],
        title="Reviews",
        label_every=2,
    )
    svg = str(chart.bars_svg())
    assert svg.count("<rect ") == 3 and svg.count("<text ") == 2
    assert "&lt;b&gt;Mon&lt;/b&gt;: 3" in svg and "<b>" not in svg
    assert 'height="0.0"' in svg and "Tue: no data" in svg
    rows = str(chart.rows_html())
    assert rows.count("<tr>") == 3
    assert '<tr><th scope="row">Tue</th><td>no data</td></tr>' in rows
    assert "&lt;b&gt;Mon&lt;/b&gt;" in rows


def _old_bars_svg(chart):  # type: ignore[no-untyped-def]
    """The former format_html version, kept as the reference."""
    from django.utils.html import format_html, format_html_join

    label_y = chart.height - 4
    return format_html_join(
        "\n",
        '<rect class="chart-bar" x="{}" y="{}" width="{}" height="{}"><title>{}: {}</title>'
        "</rect>{}",
        (
            (
                bar.x,
                bar.y,
                bar.width,
                bar.height,
                bar.label,
                bar.value_text,
                format_html(
                    '<text x="{}" y="{}" text-anchor="{}">{}</text>',
                    bar.label_x,
                    label_y,
                    bar.label_anchor,
                    bar.label,
                )
                if bar.show_label
                else "",
            )
            for bar in chart.bars
        ),
    )


def _old_rows_html(chart):  # type: ignore[no-untyped-def]
    from django.utils.html import format_html_join

    return format_html_join(
        "",
        '<tr><th scope="row">{}</th><td>{}</td></tr>',
        ((b.label, b.value_text) for b in chart.bars),
    )


def test_bars_and_rows_are_written_as_format_html_wrote_them():
    """The same markup, byte for byte, as the format_html version, on charts of every shape:
    scaled or capped, empty values, labels with markup and quotes, edge labels."""
    import random

    rng = random.Random(7)
    for size in (1, 2, 12, 30, 31):
        values = [
            rng.choice([None, 0.0, rng.uniform(0, 250), float(rng.randint(0, 9))])
            for _ in range(size)
        ]
        labels = [rng.choice(["01 Jan", "<i>x</i>", 'a"b', "R&D", "o'k"]) for _ in range(size)]
        for max_value in (None, 100):
            chart = bar_chart(
                values=values,
                labels=labels,
                title="T",
                max_value=max_value,
                value_format="{:.0f}%",
                label_every=rng.choice([1, 3, 7]),
            )
            assert str(chart.bars_svg()) == str(_old_bars_svg(chart))
            assert str(chart.rows_html()) == str(_old_rows_html(chart))


def test_chart_figure_matches_the_template_it_replaces():
    """_bar_chart.html's figure and table, written in Python, are the markup the template wrote
    (whitespace between tags aside): with and without data, with and without an empty text,
    with texts that need escaping and one already safe."""
    import re
    from pathlib import Path

    from django.template import Context, engines
    from django.utils.safestring import mark_safe

    old_template = Path(__file__).with_name("bar_chart_template.html").read_text()
    engine = engines["django"].engine

    def normalised(html: str) -> str:
        return re.sub(r">\s+<", "><", html).strip()

    charts = [
        bar_chart(values=[3.0, None, 1.0], labels=["<b>Mon</b>", "Tue", "Wed"], title="R&D <x>"),
        bar_chart(values=[None, 0.0], labels=["a", "b"], title="Empty", label_heading='"L"'),
        bar_chart(
            values=[50.0, 75.5],
            labels=["x", "y"],
            title="Rate",
            max_value=100,
            value_format="{:.0f}%",
            value_heading="Pass <rate>",
        ),
    ]
    for chart in charts:
        for empty_text in ("", "Nothing <yet> & more", mark_safe("<em>safe</em>")):
            context = {"chart": chart, "chart_id": "c-1", "empty_text": empty_text}
            old = engine.from_string(old_template).render(Context(context))
            new = engine.from_string("{% include 'quizzes/_bar_chart.html' %}")
            assert normalised(new.render(Context(context))) == normalised(old)
