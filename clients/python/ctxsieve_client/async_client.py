"""`AsyncClient`: the same calls as `Client` (client.py), awaitable; each sends what `Requests` builds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

import httpx

from .calls import (
    JSON,
    Call,
    CodeSearchOptions,
    CompactOptions,
    FilterOptions,
    HookOptions,
    M,
    QueryOptions,
    ReadOptions,
    RefilterOptions,
    RefPart,
    Requests,
    SearchOptions,
    SelectOptions,
    ToolFormat,
)
from .models import (
    CodeSearchResult,
    CollectionInfo,
    CollectionResult,
    Compaction,
    DocumentPage,
    DocumentsAdded,
    FileOrder,
    FilterResult,
    RefContent,
    RepoInfo,
    RepoList,
    SearchResult,
    Selection,
    SessionReport,
    ToolsetDetail,
    ToolsetInfo,
)
from .sending import client_headers, read_answer, session_header, verify_tls


class AsyncClient:
    """The same calls as `Client`, awaitable."""

    def __init__(self, base_url: str, api_key: str | None = None, session_id: str | None = None,
                 timeout: float = 120.0, transport: httpx.AsyncBaseTransport | None = None, agent: str | None = None
                 ) -> None:
        self._http = httpx.AsyncClient(base_url=base_url.rstrip("/"),
                                       headers=client_headers(api_key, session_id, agent), timeout=timeout,
                                       transport=transport, verify=verify_tls(base_url))

    async def send(self, call: Call[M]) -> M:
        """Send one request built by `Requests`; raises `CtxsieveError` on a non-2xx answer."""
        response = await self._http.request(call.method, call.path, params=call.params, json=call.body,
                                            headers=session_header(call))
        return read_answer(response, call)

    async def filter(self, query: str | None, content: str | None = None, **options: Unpack[FilterOptions]
                     ) -> FilterResult:
        """See `Client.filter`."""
        return await self.send(Requests.filter(query, content, **options))

    async def refilter(self, ref: str, query: str | None, **options: Unpack[RefilterOptions]) -> FilterResult:
        """See `Client.refilter`."""
        return await self.send(Requests.refilter(ref, query, **options))

    async def fetch_ref(self, ref: str, **part: Unpack[RefPart]) -> RefContent:
        """See `Client.fetch_ref`."""
        return await self.send(Requests.fetch_ref(ref, **part))

    async def delete_ref(self, ref: str) -> None:
        """See `Client.delete_ref`."""
        await self.send(Requests.delete_ref(ref))

    async def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """See `Client.search`."""
        return await self.send(Requests.search(query, **options))

    async def read(self, path: str, query: str, **options: Unpack[ReadOptions]) -> FilterResult:
        """See `Client.read`."""
        return await self.send(Requests.read(path, query, **options))

    async def register_toolset(self, name: str, tools: Sequence[JSON]) -> ToolsetInfo:
        """See `Client.register_toolset`."""
        return await self.send(Requests.register_toolset(name, tools))

    async def toolset(self, name: str, format: ToolFormat = "openai") -> ToolsetDetail:  # noqa: A002
        """See `Client.toolset`."""
        return await self.send(Requests.toolset(name, format))

    async def delete_toolset(self, name: str) -> None:
        """See `Client.delete_toolset`."""
        await self.send(Requests.delete_toolset(name))

    async def select_tools(self, query: str, toolsets: Sequence[str], **options: Unpack[SelectOptions]) -> Selection:
        """See `Client.select_tools`."""
        return await self.send(Requests.select_tools(query, toolsets, **options))

    async def tools_feedback(self, query: str, used: Sequence[str], toolsets: Sequence[str]) -> int:
        """See `Client.tools_feedback`."""
        return int((await self.send(Requests.tools_feedback(query, used, toolsets)))["recorded"])

    async def import_feedback(self, uses: Sequence[tuple[str, Sequence[str]]], toolsets: Sequence[str]) -> int:
        """See `Client.import_feedback`."""
        return sum([int((await self.send(call))["recorded"]) for call in Requests.import_feedback(uses, toolsets)])

    async def create_collection(self, name: str, description: str = "") -> CollectionInfo:
        """See `Client.create_collection`."""
        return await self.send(Requests.create_collection(name, description))

    async def collection(self, name: str) -> CollectionInfo:
        """See `Client.collection`."""
        return await self.send(Requests.collection(name))

    async def add_documents(self, name: str, documents: Sequence[JSON]) -> DocumentsAdded:
        """See `Client.add_documents`."""
        return await self.send(Requests.add_documents(name, documents))

    async def list_documents(self, name: str, offset: int = 0, limit: int = 100) -> DocumentPage:
        """See `Client.list_documents`."""
        return await self.send(Requests.list_documents(name, offset, limit))

    async def delete_document(self, name: str, doc_id: str) -> None:
        """See `Client.delete_document`."""
        await self.send(Requests.delete_document(name, doc_id))

    async def query_collection(self, name: str, query: str, **options: Unpack[QueryOptions]) -> CollectionResult:
        """See `Client.query_collection`."""
        return await self.send(Requests.query_collection(name, query, **options))

    async def index_repo(self, name: str, path: str) -> RepoInfo:
        """See `Client.index_repo`."""
        return await self.send(Requests.index_repo(name, path))

    async def sync_repo(self, name: str) -> RepoInfo:
        """See `Client.sync_repo`."""
        return await self.send(Requests.sync_repo(name))

    async def repo(self, name: str) -> RepoInfo:
        """See `Client.repo`."""
        return await self.send(Requests.repo(name))

    async def repos(self) -> RepoList:
        """See `Client.repos`."""
        return await self.send(Requests.repos())

    async def delete_repo(self, name: str) -> None:
        """See `Client.delete_repo`."""
        await self.send(Requests.delete_repo(name))

    async def search_code(self, name: str, query: str, **options: Unpack[CodeSearchOptions]) -> CodeSearchResult:
        """See `Client.search_code`."""
        return await self.send(Requests.search_code(name, query, **options))

    async def rank_files(self, query: str, paths: Sequence[str], base: str | None = None) -> FileOrder:
        """See `Client.rank_files`."""
        return await self.send(Requests.rank_files(query, paths, base))

    async def compact(self, messages: Sequence[JSON], **options: Unpack[CompactOptions]) -> Compaction:
        """See `Client.compact`."""
        return await self.send(Requests.compact(messages, **options))

    async def claude_code_hook(self, payload: JSON, **options: Unpack[HookOptions]) -> JSON:
        """See `Client.claude_code_hook`."""
        return await self.send(Requests.claude_code_hook(payload, **options))

    async def session(self, session_id: str) -> SessionReport:
        """See `Client.session`."""
        return await self.send(Requests.session(session_id))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
