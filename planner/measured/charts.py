"""The measured-against-predicted chart: for each metric a pair of bars, each scaled to the larger
of the two (the metrics have different units), with the figures as a table beside it."""

from __future__ import annotations

from dataclasses import dataclass

from planner.capacity.measured import MeasuredComparison
from planner.capacity.measured.compare import LABELS

WIDTH = 640
BAR_LEFT = 210  # room for the metric's name
BAR_RIGHT = 120  # room for the figure after the bar
BAR_HEIGHT = 16
ROW_HEIGHT = 56


@dataclass(frozen=True, slots=True)
class Bar:
    label: str  # "measured" or "predicted"
    y: int
    width: float
    text: str  # the figure, drawn after the bar


@dataclass(frozen=True, slots=True)
class Row:
    metric: str
    label: str
    y: int
    bars: tuple[Bar, Bar]
    ratio: str


@dataclass(frozen=True, slots=True)
class GapChart:
    rows: list[Row]
    width: int = WIDTH
    bar_left: int = BAR_LEFT

    @property
    def height(self) -> int:
        return ROW_HEIGHT * len(self.rows) + 8

    @property
    def description(self) -> str:
        return "; ".join(
            f"{r.label}: measured {r.bars[0].text}, predicted {r.bars[1].text}, ratio {r.ratio}"
            for r in self.rows
        )


def gap_chart(comparison: MeasuredComparison) -> GapChart:
    """The gaps in the comparison's order (the largest first)."""
    span = WIDTH - BAR_LEFT - BAR_RIGHT
    rows = []
    for i, gap in enumerate(comparison.gaps):
        top = i * ROW_HEIGHT + 8
        largest = max(gap.measured, gap.predicted) or 1.0
        bars = (
            Bar("measured", top, round(gap.measured / largest * span, 1), f"{gap.measured:,.1f}"),
            Bar(
                "predicted",
                top + BAR_HEIGHT + 4,
                round(gap.predicted / largest * span, 1),
                f"{gap.predicted:,.1f}",
            ),
        )
        rows.append(Row(gap.metric, LABELS[gap.metric], top, bars, f"{gap.ratio:.2f}"))
    return GapChart(rows)
