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
