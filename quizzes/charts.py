"""Geometry for the server-rendered SVG charts on the statistics pages (no inline styles needed)."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from django.utils.formats import localize
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

# A narrow drawing (user units ≈ CSS pixels on a phone) so the 13-unit labels stay readable at
# 375 px; on wider screens the SVG scales up to its CSS max-width.
WIDTH = 400
HEIGHT = 180
PAD_LEFT = 42
LABEL_HALF_WIDTH = 22  # about half a "30 Dec" label at the chart's font size
PAD_BOTTOM = 22
PAD_TOP = 12


# Not frozen: a frozen dataclass sets each field through object.__setattr__, a quarter of a
# chart's building time for sixty bars a page; nothing changes a bar once built.
@dataclass(slots=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str
    value_text: str
    show_label: bool
    label_x: float
    label_anchor: str  # SVG text-anchor: labels near an edge are anchored to stay inside


def _label_position(x: float, width: float) -> tuple[float, str]:
    centre = x + width / 2
    if centre + LABEL_HALF_WIDTH > WIDTH:
        return WIDTH, "end"
    if centre - LABEL_HALF_WIDTH < PAD_LEFT:
        return x, "start"
    return round(centre, 1), "middle"


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    bars: list[Bar]
    max_label: str
    baseline_y: float
    plot_left: int
    title: str
    label_heading: str  # column headings of the figures table under the chart
    value_heading: str

    @property
    def has_data(self) -> bool:
        """False when no bar has a height: the page says so in words instead."""
        return any(bar.height > 0 for bar in self.bars)

    # The bars and the figures table are written here rather than in a template loop, with the
    # escaping format_html applies (html.escape of every text; numbers need none) at a fraction
    # of its cost: format_html per bar was most of a chart's time.
    def _texts(self) -> list[tuple[str, str]]:
        """Each bar's label and value text, escaped (once for the bars and the table)."""
        return [(escape(bar.label), escape(bar.value_text)) for bar in self.bars]

    def bars_svg(self, texts: list[tuple[str, str]] | None = None) -> SafeString:
        label_y = self.height - 4
        parts = []
        for bar, (label, value) in zip(self.bars, texts or self._texts(), strict=True):
            parts.append(
                f'<rect class="chart-bar" x="{bar.x}" y="{bar.y}" width="{bar.width}" '
                f'height="{bar.height}"><title>{label}: {value}</title></rect>'
                + (
                    f'<text x="{bar.label_x}" y="{label_y}" text-anchor="{escape(bar.label_anchor)}"'
                    f">{label}</text>"
                    if bar.show_label
                    else ""
                )
            )
        return mark_safe("\n".join(parts))

    def rows_html(self, texts: list[tuple[str, str]] | None = None) -> SafeString:
        return mark_safe(
            "".join(
                f'<tr><th scope="row">{label}</th><td>{value}</td></tr>'
                for label, value in texts or self._texts()
            )
        )


def figure_html(chart: BarChart, chart_id: str, empty_text: str) -> SafeString:
    """The chart as _bar_chart.html lays it out: the SVG figure with its caption, then the
    figures table. Texts escaped and numbers localized as the template's variables were."""
    cid, title = conditional_escape(chart_id), conditional_escape(chart.title)
    texts = chart._texts()
    width, height = localize(chart.width), localize(chart.height)
    left, base = localize(chart.plot_left), localize(chart.baseline_y)
    label_x = localize(chart.plot_left - 4)
    empty = (
        f" <strong>{conditional_escape(empty_text)}</strong>"
        if not chart.has_data and empty_text
        else ""
    )
    return mark_safe(
        '<figure class="chart-figure">\n'
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-labelledby="{cid}-title" aria-describedby="{cid}-caption">\n'
        f'<title id="{cid}-title">{title}</title>\n'
        f'<line class="axis" x1="{left}" y1="{base}" x2="{width}" y2="{base}"></line>\n'
        f'<text class="axis-label" x="{label_x}" y="14" text-anchor="end">'
        f"{conditional_escape(chart.max_label)}</text>\n"
        f'<text class="axis-label" x="{label_x}" y="{base}" text-anchor="end">0</text>\n'
        f"{chart.bars_svg(texts)}\n</svg>\n"
        f'<figcaption id="{cid}-caption" class="help">{title}.{empty} The figures are in the '
        "table below.</figcaption>\n</figure>\n"
        f'<details class="chart-data" data-testid="{cid}-data">\n'
        "<summary>The figures as a table</summary>\n"
        f'<div class="table-wrap"><table aria-label="{title}">\n'
        f'<thead><tr><th scope="col">{conditional_escape(chart.label_heading)}</th>'
        f'<th scope="col">{conditional_escape(chart.value_heading)}</th></tr></thead>\n'
        f"<tbody>\n{chart.rows_html(texts)}\n</tbody>\n</table></div>\n</details>\n"
    )


def bar_chart(
    *,
    values: list[float | None],
    labels: list[str],
    title: str,
    max_value: float | None = None,
    value_format: str = "{:.0f}",
    label_every: int = 1,
    label_heading: str = "When",
    value_heading: str = "Value",
) -> BarChart:
    """Bars scaled to the tallest value (or `max_value`); None draws no bar and says "no data"."""
    top = max_value if max_value is not None else max([v for v in values if v] or [1.0])
    top = top or 1.0
    plot_w = WIDTH - PAD_LEFT
    plot_h = HEIGHT - PAD_BOTTOM - PAD_TOP
    slot = plot_w / max(len(values), 1)
    bars = []
    for i, (value, label) in enumerate(zip(values, labels, strict=True)):
        h = 0.0 if value is None else plot_h * min(value / top, 1.0)
        x = round(PAD_LEFT + i * slot + slot * 0.15, 1)
        label_x, label_anchor = _label_position(x, slot * 0.7)
        bars.append(
            Bar(
                x=x,
                y=round(PAD_TOP + plot_h - h, 1),
                width=round(slot * 0.7, 1),
                height=round(h, 1),
                label=label,
                value_text="no data" if value is None else value_format.format(value),
                show_label=i % label_every == 0,
                label_x=label_x,
                label_anchor=label_anchor,
            )
        )
    return BarChart(
        width=WIDTH,
        height=HEIGHT,
        bars=bars,
        max_label=value_format.format(top),
        baseline_y=PAD_TOP + plot_h,
        plot_left=PAD_LEFT,
        title=title,
        label_heading=label_heading,
        value_heading=value_heading,
    )
