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
