"""Request and response models: the limits live here, and `/openapi.json` is built from them.

`common` (limits, text fields, snippets, usage, `more`, errors), then one module per resource.
"""

from __future__ import annotations

from .collections import (
    CollectionDocument,
    CollectionInfo,
    CollectionList,
    CollectionPut,
    CollectionQuery,
    CollectionQueryResponse,
    CollectionSnippet,
    DocumentEntry,
    DocumentList,
    DocumentsAdded,
    DocumentsPost,
)
from .common import (
    MAX_DOCUMENTS,
    MAX_K,
    MAX_NAME_CHARS,
    MAX_TEXT_CHARS,
    MAX_TOKENS,
    NAME_PATTERN,
    ContentTypeIn,
    Deleted,
    DocumentIn,
    ErrorBody,
    ErrorResponse,
    Health,
    MoreOut,
    Placeholder,
    Query,
    Ready,
    RerunOut,
    ServingStages,
    Shallow,
    ShortText,
    SnippetOut,
    SourceSpec,
    Strict,
    Text,
    UsageOut,
)
from .context import (
    ClearedOut,
    CompactRequest,
    CompactResponse,
    CompactUsage,
    Tuned,
)
from .filtering import (
    Domain,
    FilterOptions,
    FilterRequest,
    FilterResponse,
    ReadRequest,
    ReadResponse,
    RefilterRequest,
    RefResponse,
    SearchRequest,
    SearchResponse,
    SearchResultOut,
    SourceOut,
)
from .sessions import (
    SessionList,
    SessionRequest,
    SessionResponse,
    SessionSummary,
)
from .tools import (
    MAX_TOOLS,
    MAX_USES,
    FeedbackRequest,
    FeedbackResponse,
    RecordedUse,
    SelectedOut,
    SelectRequest,
    SelectResponse,
    SelectUsage,
    ToolFormat,
    ToolsetDetail,
    ToolsetInfo,
    ToolsetList,
    ToolsetName,
    ToolsetPut,
    Used,
)

__all__ = ["ClearedOut", "CollectionDocument", "CollectionInfo", "CollectionList", "CollectionPut",
           "CollectionQuery", "CollectionQueryResponse", "CollectionSnippet", "CompactRequest", "CompactResponse",
           "CompactUsage", "ContentTypeIn", "Deleted", "DocumentEntry", "DocumentIn", "DocumentList",
           "DocumentsAdded", "DocumentsPost", "Domain", "ErrorBody", "ErrorResponse", "FeedbackRequest",
           "FeedbackResponse", "FilterOptions", "FilterRequest", "FilterResponse", "Health", "MAX_DOCUMENTS",
           "MAX_K", "MAX_NAME_CHARS", "MAX_TEXT_CHARS", "MAX_TOKENS", "MAX_TOOLS", "MAX_USES", "MoreOut",
           "NAME_PATTERN",
           "Placeholder", "Query", "ReadRequest", "ReadResponse", "Ready", "RecordedUse", "RefResponse",
           "RefilterRequest", "RerunOut", "SearchRequest", "SearchResponse", "SearchResultOut", "SelectRequest",
           "SelectResponse", "SelectUsage", "SelectedOut", "ServingStages", "SessionList", "SessionRequest",
           "SessionResponse",
           "SessionSummary", "Shallow", "ShortText", "SnippetOut", "SourceOut", "SourceSpec", "Strict", "Text",
           "ToolFormat", "ToolsetDetail", "ToolsetInfo", "ToolsetList", "ToolsetName", "ToolsetPut", "Tuned",
           "UsageOut", "Used"]
