"""Tool-definition retrieval: `registry` (toolsets and recorded uses in the store), `index` (selection over the
registry), `prepared` (what a selection works on, built once per version), `records` (what is stored),
`scoring` (the fusion and abstention rules, shared with the tuning bench)."""

from __future__ import annotations

from .index import Selected, Selection, SelectParams, ToolIndex
from .records import Recorded, ToolRecord, ToolsetHead
from .registry import Toolset
from .scoring import (
    ABSTAIN_QUANTILE,
    MARGIN_MIN_TOOLS,
    TOOL_DENSE_WEIGHT,
    WHOLE_WEIGHT,
    Evidence,
    Judge,
    attribute,
    calibrate,
    calibration_asks,
    centroids,
    fit_signals,
    fuse_tool_scores,
    nearest_evidence,
    without,
)

__all__ = ["ABSTAIN_QUANTILE", "MARGIN_MIN_TOOLS", "TOOL_DENSE_WEIGHT", "WHOLE_WEIGHT", "Evidence", "Judge", "Recorded",
           "SelectParams", "Selected", "Selection", "ToolIndex", "ToolRecord", "Toolset", "ToolsetHead", "attribute",
           "calibrate", "calibration_asks", "centroids", "fit_signals", "fuse_tool_scores", "nearest_evidence",
           "without"]
