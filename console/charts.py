"""Server-rendered SVG charts: geometry only, the template draws it (no script, no library)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

WIDTH, HEIGHT = 720, 180
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 36, 8, 12, 26


@dataclass(frozen=True)
class Bar:
    day: date
    count: int
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class BarChart:
    bars: list[Bar]
    peak: int
    total: int
    width: int = WIDTH
    height: int = HEIGHT
    baseline: float = HEIGHT - PAD_BOTTOM
    left: float = PAD_LEFT
    right: float = WIDTH - PAD_RIGHT
    top: float = PAD_TOP

    @property
    def labelled(self) -> list[Bar]:
        """The bars whose day is written under the axis: every seventh, and the last (a
        seventh too close to the last would print over it)."""
        last = len(self.bars) - 1
        return [bar for n, bar in enumerate(self.bars)
                if (n % 7 == 0 and last - n > 3) or n == last]


def daily_bars(series: list[tuple[date, int]]) -> BarChart:
    """One bar per day, scaled to the busiest day (an empty series draws a flat baseline)."""
    peak = max((count for _, count in series), default=0)
    plot_height = HEIGHT - PAD_TOP - PAD_BOTTOM
    slot = (WIDTH - PAD_LEFT - PAD_RIGHT) / max(len(series), 1)
    bars = []
    for n, (day, count) in enumerate(series):
        height = plot_height * count / peak if peak else 0.0
        bars.append(Bar(day=day, count=count, x=round(PAD_LEFT + n * slot + slot * 0.15, 1),
                        y=round(HEIGHT - PAD_BOTTOM - height, 1), width=round(slot * 0.7, 1),
                        height=round(height, 1)))
    return BarChart(bars=bars, peak=peak, total=sum(count for _, count in series))
