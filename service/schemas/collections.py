"""Static collections."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field

from .common import (
    MAX_DOCUMENTS,
    MAX_K,
    MAX_TOKENS,
    ContentTypeIn,
    MoreOut,
    Placeholder,
    Query,
    Shallow,
    ShortText,
    SnippetOut,
    Strict,
    Text,
    UsageOut,
    valid_unicode,
)

# --- collections ------------------------------------------------------------------------------------



class CollectionPut(Strict):
    description: Annotated[str, Field(max_length=2_000)] = ""


class CollectionDocument(Strict):
    id: Annotated[str, Field(min_length=1, max_length=512), AfterValidator(valid_unicode)]
    text: Text
    title: ShortText | None = None
    url: ShortText | None = None
    metadata: Annotated[dict[str, Any], Shallow] = Field(default_factory=dict)
    content_type: ContentTypeIn = "auto"


class DocumentsPost(Strict):
    documents: Annotated[list[CollectionDocument], Field(min_length=1, max_length=MAX_DOCUMENTS)]


class DocumentsAdded(BaseModel):
    ids: list[str]
    chunks: int


class CollectionInfo(BaseModel):
    name: str
    description: str
    documents: int
    chunks: int


class DocumentEntry(BaseModel):
    id: str
    hash: str = Field(description="content hash: unchanged documents are skipped on re-ingest")
    chunks: int
    title: str | None = None
    url: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class DocumentList(BaseModel):
    documents: list[DocumentEntry]
    offset: int = Field(0, description="where this page starts")
    next_offset: int | None = Field(None, description="pass as ?offset= for the next page; null on the last")


class CollectionList(BaseModel):
    collections: list[CollectionInfo]


class CollectionQuery(Strict):
    query: Query
    k: int = Field(5, ge=1, le=MAX_K)
    max_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS)
    min_score: float | None = Field(None, ge=-1.0, le=1.0)
    filter: Annotated[dict[str, Any], Shallow] = Field(
        default_factory=dict, max_length=32,
        description="metadata key -> condition, all must hold: a value (equal), {\"any\": [..]}, "
                    "{\"gte\"|\"gt\"|\"lte\"|\"lt\": number or ISO date}, {\"not\": condition}")
    placeholder: Placeholder = "http"


class CollectionSnippet(SnippetOut):
    document_id: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class CollectionQueryResponse(BaseModel):
    snippets: list[CollectionSnippet]
    placeholder: str
    more: MoreOut
    usage: UsageOut
    passthrough: bool = False
