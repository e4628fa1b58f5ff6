"""Static collections: create, add or replace documents by id, query with metadata filters, delete."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Query

from ctxsieve.indexes import collections as core
from ctxsieve.indexes.collections import NewDocument, QueryParams

from ..deps import EngineDep, NamePath, TenantDep
from ..schemas import (
    CollectionInfo,
    CollectionList,
    CollectionPut,
    CollectionQuery,
    CollectionQueryResponse,
    CollectionSnippet,
    Deleted,
    DocumentEntry,
    DocumentList,
    DocumentsAdded,
    DocumentsPost,
    MoreOut,
    UsageOut,
)

router = APIRouter(prefix="/v1/collections", tags=["collections"])
Name = NamePath


@router.put("/{name}", response_model=CollectionInfo, operation_id="put_collection")
def put_collection(name: Name, body: CollectionPut, engine: EngineDep, tenant: TenantDep) -> CollectionInfo:
    """Create a collection (idempotent; updates the description)."""
    engine.collections.create(tenant, name, body.description)
    return _info(engine.collections.info(tenant, name))


@router.post("/{name}/documents", response_model=DocumentsAdded, operation_id="add_documents")
def add_documents(name: Name, body: DocumentsPost, engine: EngineDep, tenant: TenantDep) -> DocumentsAdded:
    """Add or replace documents by id; unchanged documents are not re-embedded."""
    docs = [NewDocument(d.id, d.text, d.title, d.url, d.metadata, d.content_type) for d in body.documents]
    with engine.gate.admit():
        ids, chunks = engine.collections.add(tenant, name, docs)
    return DocumentsAdded(ids=ids, chunks=chunks)


@router.post("/{name}/query", response_model=CollectionQueryResponse, operation_id="query_collection")
def query_collection(name: Name, body: CollectionQuery, engine: EngineDep, tenant: TenantDep
                     ) -> CollectionQueryResponse:
    """The chunks most relevant to the query, best first, within k and max_tokens."""
    with engine.gate.admit():
        params = QueryParams(k=body.k, max_tokens=body.max_tokens, min_score=body.min_score, filter=body.filter)
        result = engine.collections.query(tenant, name, body.query, params)
    snippets = [CollectionSnippet(id=f"{name}/{h.document_id}#{h.start}", document=0, **asdict(h))
                for h in result.snippets]
    return CollectionQueryResponse(snippets=snippets, placeholder=result.more.placeholder(body.placeholder),
                                   more=MoreOut.model_validate(asdict(result.more)),
                                   usage=UsageOut(**asdict(result.usage)))


@router.get("/{name}/documents", response_model=DocumentList, operation_id="list_documents")
def list_documents(name: Name, engine: EngineDep, tenant: TenantDep, offset: int = Query(0, ge=0, le=10_000_000),
                   limit: int = Query(100, ge=1, le=1000)) -> DocumentList:
    """A page of the documents (id, hash, chunks, title, url, metadata), in a stable order."""
    page = engine.collections.documents(tenant, name, offset, limit + 1)  # one more says whether a next page exists
    entries = [DocumentEntry(id=d.id, hash=d.hash, chunks=d.chunks, title=d.title, url=d.url, metadata=d.metadata)
               for d in page[:limit]]
    return DocumentList(documents=entries, offset=offset,
                        next_offset=offset + limit if len(page) > limit else None)


@router.get("", response_model=CollectionList, operation_id="list_collections")
def list_collections(engine: EngineDep, tenant: TenantDep) -> CollectionList:
    return CollectionList(collections=[_info(c) for c in engine.collections.all(tenant)])


@router.get("/{name}", response_model=CollectionInfo, operation_id="get_collection")
def get_collection(name: Name, engine: EngineDep, tenant: TenantDep) -> CollectionInfo:
    return _info(engine.collections.info(tenant, name))


@router.delete("/{name}", response_model=Deleted, operation_id="delete_collection")
def delete_collection(name: Name, engine: EngineDep, tenant: TenantDep) -> Deleted:
    engine.collections.delete(tenant, name)
    return Deleted(deleted=name)


@router.delete("/{name}/documents/{doc_id:path}", response_model=Deleted, operation_id="delete_document")
def delete_document(name: Name, doc_id: str, engine: EngineDep, tenant: TenantDep) -> Deleted:
    engine.collections.remove(tenant, name, doc_id)
    return Deleted(deleted=doc_id)


def _info(info: core.CollectionInfo) -> CollectionInfo:
    return CollectionInfo(**asdict(info))
