"""A collection query's `filter` (metadata key -> condition) as engine conditions, and the payload index a
metadata value calls for. A bad key or operator is refused here, naming it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..errors import InvalidInput
from ..store import Condition, IndexKind, Match, MatchAny, Range, Where

OPERATORS = ("any", "gte", "gt", "lte", "lt", "not")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")


def _iso(value: Any) -> str | None:
    """An ISO 8601 date or datetime as RFC 3339 (what the engine compares), else None."""
    if not isinstance(value, str) or not _ISO_DATE.match(value):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.isoformat() if parsed.tzinfo else parsed.isoformat() + "Z"


def index_kind(value: Any) -> IndexKind | None:
    """The payload index a metadata value calls for (lists by their first element)."""
    if isinstance(value, list):
        return index_kind(value[0]) if value else None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "datetime" if _iso(value) else "keyword"
    return None


def translate_filter(key: str, condition: Any) -> Condition:
    """One entry of a query's `filter` (metadata key -> condition) as an engine condition; 422 otherwise."""
    field = f"metadata.{key}"
    if not isinstance(condition, dict):
        if isinstance(condition, bool | int | str):
            return Match(field, condition)
        if isinstance(condition, float):
            return Range(field, gte=condition, lte=condition)
        raise InvalidInput(f"filter on {key!r}: {condition!r} is not a value or a condition")
    unknown = sorted(set(condition) - set(OPERATORS))
    if unknown or not condition:
        raise InvalidInput(f"filter on {key!r}: unknown operator(s) {', '.join(map(repr, unknown)) or '(none)'}; "
                           f"use a value or {', '.join(OPERATORS)}")
    parts: list[Condition] = []
    if "any" in condition:
        parts.append(_any(key, field, condition["any"]))
    bounds = {op: condition[op] for op in ("gte", "gt", "lte", "lt") if op in condition}
    if bounds:
        parts.append(_range(key, field, bounds))
    if "not" in condition:
        parts.append(Where(must_not=(translate_filter(key, condition["not"]),)))
    return parts[0] if len(parts) == 1 else Where(tuple(parts))


def _any(key: str, field: str, values: Any) -> Condition:
    if not isinstance(values, list) or not values:
        raise InvalidInput(f"filter on {key!r}: 'any' takes a non-empty list")
    if all(isinstance(v, str) for v in values):
        return MatchAny(field, tuple(values))
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return MatchAny(field, tuple(values))
    raise InvalidInput(f"filter on {key!r}: 'any' takes strings or integers, all of one kind")


def _range(key: str, field: str, bounds: Mapping[str, Any]) -> Condition:
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in bounds.values()):
        return Range(field, **bounds)
    dates = {op: _iso(v) for op, v in bounds.items()}
    if all(dates.values()):
        return Range(field, dates=True, **dates)
    raise InvalidInput(f"filter on {key!r}: gte/gt/lte/lt take numbers or ISO 8601 dates, not {dict(bounds)!r}")


