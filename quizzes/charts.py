"""Geometry for the server-rendered SVG charts on the statistics pages (no inline styles needed)."""

from __future__ import annotations

from dataclasses import dataclass

WIDTH = 600
HEIGHT = 180
PAD_LEFT = 36
PAD_BOTTOM = 24
PAD_TOP = 10


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str
    value_text: str
    show_label: bool


@dataclass(frozen=True)
class BarChart:
    width: int
    height: int
    bars: list[Bar]
    max_label: str
    baseline_y: float
    plot_left: int
    title: str


def bar_chart(
    *,
    values: list[float | None],
    labels: list[str],
    title: str,
    max_value: float | None = None,
    value_format: str = "{:.0f}",
    label_every: int = 1,
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
        bars.append(
            Bar(
                x=round(PAD_LEFT + i * slot + slot * 0.15, 1),
                y=round(PAD_TOP + plot_h - h, 1),
                width=round(slot * 0.7, 1),
                height=round(h, 1),
                label=label,
                value_text="no data" if value is None else value_format.format(value),
                show_label=i % label_every == 0,
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
    )
