"""Easing functions: plain ``float -> float`` on a 0..1 progress (manim rate functions).

A scene's tracks name easings by the keys of :data:`EASINGS`, which is where the set of
names is defined: :mod:`renderer.ops` exports it to the page, whose player
(``overlay/static/player.js``) refuses to start when its own formulas cover other names, and
a browser test compares both formulas on a grid of progress values.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["EASINGS", "ease"]


def _linear(p: float) -> float:
    """p"""
    return p


def _step(p: float) -> float:
    """0 until p reaches 1, then 1"""
    return 1.0 if p >= 1.0 else 0.0


def _in(p: float) -> float:
    """p^3 (cubic in)"""
    return p * p * p


def _out(p: float) -> float:
    """1 - (1 - p)^3 (cubic out)"""
    q = 1.0 - p
    return 1.0 - q * q * q


def _inout(p: float) -> float:
    """4 p^3 below p = 0.5, else 1 - (2 - 2p)^3 / 2 (cubic in-out)"""
    if p < 0.5:
        return 4.0 * p * p * p
    q = -2.0 * p + 2.0
    return 1.0 - q * q * q / 2.0


def _back(p: float) -> float:
    """1 + 2.70158 (p - 1)^3 + 1.70158 (p - 1)^2 (cubic out with a 10% overshoot)"""
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
