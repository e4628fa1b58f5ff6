"""Tool-definition retrieval: `index` (the registry and selection), `records` (what is stored), `scoring` (the
fusion and abstention rules, shared with the tuning bench)."""

from __future__ import annotations

from .index import Selected, Selection, SelectParams, ToolIndex, Toolset
from .records import Recorded, ToolRecord, ToolsetHead
from .scoring import (
    ABSTAIN_MARGIN,
    ABSTAIN_QUANTILE,
    TOOL_DENSE_WEIGHT,
    WHOLE_WEIGHT,
    Evidence,
    attribute,
    calibration_asks,
    centroids,
    fuse_tool_scores,
    near_miss,
    nearest_evidence,
)

__all__ = ["ABSTAIN_MARGIN", "ABSTAIN_QUANTILE", "TOOL_DENSE_WEIGHT", "WHOLE_WEIGHT", "Evidence", "Recorded",
           "attribute", "centroids", "SelectParams", "Selected",
           "Selection", "ToolIndex", "ToolRecord", "Toolset", "ToolsetHead", "calibration_asks", "fuse_tool_scores",
           "near_miss", "nearest_evidence"]
