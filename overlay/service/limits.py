"""Size limits of a settings document, checked before the models validate it.

Pydantic validates every item of an array before it checks the array's ``max_length``, and
reports each unknown key of an object as an error of its own: a settings PATCH with 100,000
unknown theme keys took 0.2 s to validate and 0.8 s more to list its errors (a 7 MB answer,
issue 22 item 8), 100,000 view switches 1.6 s.  So the document's shape is first held
against the limits the models' JSON schema states: ``maxItems`` of an array, ``maxProperties``
of a map, and for a model's object the fields it knows (plus :data:`SLACK` unknown keys,
which the model then names).  The first excess is refused with its place, after a walk of
the document that costs milliseconds.  String lengths are the models' own ``max_length``
(checked before a string is read further).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from .errors import BadRequest

__all__ = ["SLACK", "MAX_MAP", "MAX_ARRAY", "parse", "check_shape", "check_shape_of"]

#: unknown keys an object may carry past its model's fields (the model then names each)
SLACK = 16
#: keys of a map, or items of an array, whose schema states no limit
MAX_MAP = 256
MAX_ARRAY = 4096


M = TypeVar("M", bound=BaseModel)


@lru_cache(maxsize=32)
def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(by_alias=True)


def check_shape_of(model: type[BaseModel], data: Any) -> None:
    """:func:`check_shape` of ``data`` against ``model``'s schema.

    Raises:
        BadRequest: an array or object larger than the model allows there.
    """
    schema = _schema(model)
    check_shape(data, schema, schema.get("$defs", {}))


def parse(model: type[M], data: Any) -> M:
    """``data`` (parsed JSON) as ``model``, its shape checked first (:func:`check_shape`).

    Raises:
        BadRequest: an array or object larger than the model allows there.
        pydantic.ValidationError: the model refuses it.
    """
    check_shape_of(model, data)
    return model.model_validate(data)


def check_shape(value: Any, node: dict[str, Any], defs: dict[str, Any], where: tuple[str | int, ...] = ()) -> None:
    """Hold ``value`` against the size limits of JSON schema ``node`` (``defs``: its ``$defs``).

    Raises:
        BadRequest: an array or object over its limit, naming its place (``errors`` carries
            ``loc`` and ``msg`` as a validation error does).
    """
    node = _resolve(node, value, defs)
    if isinstance(value, dict):
        props: dict[str, Any] = node.get("properties") or {}
        mapped = node.get("additionalProperties")
        if props:
            limit = len(props) + SLACK
        else:
            limit = int(node.get("maxProperties", MAX_MAP))
        if len(value) > limit:
            _refuse(where, f"{len(value)} keys, at most {limit}")
        for key, item in value.items():
            sub = props.get(key) or (props.get(to_camel(key)) if isinstance(key, str) else None)
            if sub is None and isinstance(mapped, dict):
                sub = mapped
            if sub is not None:
                check_shape(item, sub, defs, (*where, key))
    elif isinstance(value, list):
        prefix = node.get("prefixItems")
        limit = int(node.get("maxItems", len(prefix) if prefix else MAX_ARRAY))
        if len(value) > limit:
            _refuse(where, f"{len(value)} items, at most {limit}")
        items = node.get("items")
        for i, item in enumerate(value):
            sub = prefix[i] if prefix and i < len(prefix) else items
            if isinstance(sub, dict):
                check_shape(item, sub, defs, (*where, i))


def _resolve(node: dict[str, Any], value: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """The schema of ``value`` at ``node``: references followed, and of a union the branch of
    ``value``'s JSON type."""
    for _ in range(16):
        ref = node.get("$ref")
        if isinstance(ref, str):
            node = defs.get(ref.rsplit("/", 1)[-1], {})
            continue
        branches = node.get("anyOf") or node.get("oneOf")
        if not branches:
            return node
        want = "object" if isinstance(value, dict) else "array" if isinstance(value, list) else None
        chosen = None
        for branch in branches:
            b = defs.get(branch["$ref"].rsplit("/", 1)[-1], {}) if "$ref" in branch else branch
            if want is not None and (b.get("type") == want or (want == "object" and "properties" in b)):
                chosen = branch
                break
        if chosen is None:
            return {}
        node = chosen
    return node


def _refuse(where: tuple[str | int, ...], what: str) -> None:
    place = " -> ".join(str(p) for p in where) or "body"
    raise BadRequest(f"settings: {place}: {what}", errors=[{"loc": list(where), "msg": what}])
