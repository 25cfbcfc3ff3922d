"""Inline SVG line plots for the HTML report (no JavaScript, no external resources).

:func:`svg_plot` draws a :class:`~harness.certify.Series` with its title, both axes, tick
labels and axis labels. Long series are thinned to at most :data:`MAX_POINTS` points (the first
and last points are always kept).
"""

from __future__ import annotations

import math
from html import escape

from harness.certify._checks import Series

__all__ = ["MAX_POINTS", "nice_ticks", "svg_plot"]

MAX_POINTS = 600
_WIDTH, _HEIGHT = 640, 300
_LEFT, _RIGHT, _TOP, _BOTTOM = 72, 20, 34, 52


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering ``[low, high]`` (1, 2, 2.5 or 5 x 10^n)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0]
    if high < low:
        low, high = high, low
    if high == low:
        pad = abs(low) * 0.1 or 1.0
        low, high = low - pad, high + pad
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    if ticks[-1] < high:
        ticks.append(round(value, 12))
    return ticks


def _label(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1e6 or abs(value) < 1e-3:
        return f"{value:.2g}"
    return f"{value:,.6g}"


def _thin(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(points) <= MAX_POINTS:
        return points
    stride = math.ceil(len(points) / (MAX_POINTS - 1))
    return [*points[::stride], points[-1]]


def svg_plot(series: Series, *, element_id: str = "") -> str:
    """The series as an ``<svg>`` element (a string of escaped markup)."""
    points = sorted(
        (float(x), float(y))
        for x, y in series.points
        if math.isfinite(float(x)) and math.isfinite(float(y))
    )
    title = escape(series.name)
    x_label, y_label = escape(series.x_label), escape(series.y_label)
    attrs = f' id="{escape(element_id)}"' if element_id else ""
    out = [
        f'<svg class="plot"{attrs} role="img" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" aria-label="{title}: {y_label} by {x_label}">',
        f"<title>{title}</title>",
        f'<text class="plot-title" x="{_WIDTH / 2:.0f}" y="20" text-anchor="middle">{title}</text>',
    ]
    plot_w = _WIDTH - _LEFT - _RIGHT
    plot_h = _HEIGHT - _TOP - _BOTTOM
    bottom, right = _TOP + plot_h, _LEFT + plot_w
    if not points:
        out.append(
            f'<text x="{_WIDTH / 2:.0f}" y="{_HEIGHT / 2:.0f}" text-anchor="middle">'
            "no data points</text>"
        )
    else:
        xs = nice_ticks(min(p[0] for p in points), max(p[0] for p in points))
        ys = nice_ticks(min(0.0, *(p[1] for p in points)), max(p[1] for p in points))
        x0, x1, y0, y1 = xs[0], xs[-1], ys[0], ys[-1]

        def sx(x: float) -> float:
            return _LEFT + (x - x0) / (x1 - x0) * plot_w

        def sy(y: float) -> float:
            return bottom - (y - y0) / (y1 - y0) * plot_h

        for y in ys:
            out.append(
                f'<line class="grid" x1="{_LEFT}" y1="{sy(y):.1f}" x2="{right}" y2="{sy(y):.1f}"/>'
                f'<text class="tick" x="{_LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">'
                f"{escape(_label(y))}</text>"
            )
        for x in xs:
            out.append(
                f'<line class="tickmark" x1="{sx(x):.1f}" y1="{bottom}" x2="{sx(x):.1f}" '
                f'y2="{bottom + 5}"/>'
                f'<text class="tick" x="{sx(x):.1f}" y="{bottom + 18}" text-anchor="middle">'
                f"{escape(_label(x))}</text>"
            )
        drawn = _thin(points)
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in drawn)
        out.append(f'<polyline class="line" points="{path}"/>')
        if len(drawn) <= 60:
            out.extend(
                f'<circle class="dot" cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5"/>' for x, y in drawn
            )
    out += [
        f'<line class="axis" x1="{_LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}"/>',
        f'<line class="axis" x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{bottom}"/>',
        f'<text class="axis-label" x="{_LEFT + plot_w / 2:.0f}" y="{_HEIGHT - 10}" '
        f'text-anchor="middle">{x_label}</text>',
        f'<text class="axis-label" x="16" y="{_TOP + plot_h / 2:.0f}" text-anchor="middle" '
        f'transform="rotate(-90 16 {_TOP + plot_h / 2:.0f})">{y_label}</text>',
        "</svg>",
    ]
    return "".join(out)
