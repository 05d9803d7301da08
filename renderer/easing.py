"""Easing functions: plain ``float -> float`` on a 0..1 progress (manim rate functions).

The page player (``overlay/static/player.js``) implements the same formulas under the same
names; a scene names easings by these keys.  Keep both in step.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["EASINGS", "ease", "EasingName"]

EasingName = str


def _linear(p: float) -> float:
    return p


def _step(p: float) -> float:
    return 1.0 if p >= 1.0 else 0.0


def _in(p: float) -> float:
    return p * p * p


def _out(p: float) -> float:
    q = 1.0 - p
    return 1.0 - q * q * q


def _inout(p: float) -> float:
    if p < 0.5:
        return 4.0 * p * p * p
    q = -2.0 * p + 2.0
    return 1.0 - q * q * q / 2.0


def _back(p: float) -> float:
    # ease-out with a small overshoot (easings.net "easeOutBack", c1 = 1.70158)
    c1 = 1.70158
    c3 = c1 + 1.0
    q = p - 1.0
    return 1.0 + c3 * q * q * q + c1 * q * q


EASINGS: dict[str, Callable[[float], float]] = {
    "linear": _linear,
    "step": _step,
    "in": _in,
    "out": _out,
    "inout": _inout,
    "back": _back,
}


def ease(name: str, p: float) -> float:
    """Apply the easing ``name`` to progress ``p`` (clamped to 0..1)."""
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return EASINGS[name](p)
