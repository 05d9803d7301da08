"""JSON text exactly as JavaScript's ``JSON.stringify`` writes it.

The reference's tools print and hash JavaScript values, so three details differ from
Python's ``json``: numbers (``1e21``, ``1e-7``, integral floats print as integers, huge
integers lose precision as doubles), property order (integer-like keys first, ascending),
and lone surrogates (escaped as ``\\udxxx``).  Used for the CLI's JSON output, the EMN
``egn_json`` field and the baseline's canonical string.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from collections.abc import Callable, Iterable
from typing import Any

from .common import js_key_order

__all__ = ["js_number", "js_string", "stringify"]

_SAFE = 1 << 53
_SURROGATE = re.compile("[\ud800-\udfff]")


def js_number(value: int | float) -> str:
    """``String(value)`` for a JavaScript number (``null`` for NaN and infinities, as JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -_SAFE < value < _SAFE:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "null"
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    dec = Decimal(repr(abs(value)))
    _, digits_t, exp = dec.as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    exp += len(digits_t) - len(digits)
    k = len(digits)
    n = k + exp
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    es = f"e{'+' if e >= 0 else '-'}{abs(e)}"
    if k == 1:
        return sign + digits + es
    return sign + digits[0] + "." + digits[1:] + es


def js_string(text: str) -> str:
    """A JSON string literal as ``JSON.stringify`` writes it."""
    out = json.dumps(text, ensure_ascii=False)
    if _SURROGATE.search(out):
        out = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out


def stringify(value: Any, indent: int | None = None, *, sort_keys: bool = False) -> str:
    """``JSON.stringify(value, null, indent)``; ``sort_keys`` orders every object's keys
    by code point instead of JavaScript's property order (the baseline's canonical form).

    Raises:
        TypeError: a value JSON cannot hold.
    """
    parts: list[str] = []
    _emit(value, parts, " " * indent if indent else "", "", sorted if sort_keys else js_key_order)
    return "".join(parts)


def _emit(value: Any, out: list[str], step: str, pad: str, order: Callable[[dict[str, Any]], Iterable[str]]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(js_string(value))
    elif isinstance(value, (int, float)):
        out.append(js_number(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = pad + step
        sep = ",\n" + inner if step else ","
        out.append("{\n" + inner if step else "{")
        colon = ": " if step else ":"
        for i, key in enumerate(order(value)):
            if i:
                out.append(sep)
            out.append(js_string(key) + colon)
            _emit(value[key], out, step, inner, order)
        out.append("\n" + pad + "}" if step else "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = pad + step
        sep = ",\n" + inner if step else ","
        out.append("[\n" + inner if step else "[")
        for i, item in enumerate(value):
            if i:
                out.append(sep)
            _emit(item, out, step, inner, order)
        out.append("\n" + pad + "]" if step else "]")
    else:
        raise TypeError(f"{type(value).__name__} is not JSON")
