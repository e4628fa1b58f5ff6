"""Repositories (code search): register a folder, keep it in step, search its definitions."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter

from ctxsieve.indexes.repos import RepoStatus
from ctxsieve.indexes.usage import make_usage

from ..deps import EngineDep, NamePath, TenantDep
from ..schemas import Deleted
from ..schemas.common import UsageOut
from ..schemas.repos import (
    CodeHit,
    CodeSearchQuery,
    CodeSearchResponse,
    FileRankQuery,
    FileRankResponse,
    RepoInfo,
    RepoList,
    RepoProgress,
    RepoPut,
)

router = APIRouter(prefix="/v1/repos", tags=["repos"])


@router.post("/rank-files", response_model=FileRankResponse, operation_id="rank_files")
def rank_files(body: FileRankQuery, engine: EngineDep, tenant: TenantDep) -> FileRankResponse:
    """A list of files (a Glob's, a grep's) in the order the tenant's indexed repository holding them ranks them
    for the request; unchanged (`repo` null) when none holds at least half of them."""
    found = engine.repos.rank_files(tenant, body.query, body.paths, body.base)
    return FileRankResponse(repo=found.repo, paths=found.paths, ranked=found.ranked)


@router.put("/{name}", response_model=RepoInfo, status_code=202, operation_id="put_repo")
def put_repo(name: NamePath, body: RepoPut, engine: EngineDep, tenant: TenantDep) -> RepoInfo:
    """Register a folder inside the read roots as repository `name` and index it in the background."""
    return _info(engine.repos.register(tenant, name, body.path))


@router.post("/{name}/sync", response_model=RepoInfo, status_code=202, operation_id="sync_repo")
def sync_repo(name: NamePath, engine: EngineDep, tenant: TenantDep) -> RepoInfo:
    """Bring the index up to date with the files now on disk (changed files re-read, deleted ones dropped)."""
    return _info(engine.repos.sync(tenant, name))


@router.get("/{name}", response_model=RepoInfo, operation_id="get_repo")
def get_repo(name: NamePath, engine: EngineDep, tenant: TenantDep) -> RepoInfo:
    return _info(engine.repos.status(tenant, name))


@router.get("", response_model=RepoList, operation_id="list_repos")
def list_repos(engine: EngineDep, tenant: TenantDep) -> RepoList:
    return RepoList(repos=[_info(s) for s in engine.repos.all(tenant)])


@router.delete("/{name}", response_model=Deleted, operation_id="delete_repo")
def delete_repo(name: NamePath, engine: EngineDep, tenant: TenantDep) -> Deleted:
    engine.repos.delete(tenant, name)
    return Deleted(deleted=name)


@router.post("/{name}/search", response_model=CodeSearchResponse, operation_id="search_code")
def search_code(name: NamePath, body: CodeSearchQuery, engine: EngineDep, tenant: TenantDep) -> CodeSearchResponse:
    """Definitions best first, each with its true line span and its lines within the budget over all results."""
    if body.folder is not None:
        engine.repos.ensure(tenant, name, body.folder)
    found = engine.repos.search(tenant, name, body.query, body.k, body.max_tokens, body.path, windows=body.windows)
    results = [CodeHit(path=r.path, name=r.name, kind=r.kind, start_line=r.start_line, end_line=r.end_line,
                       score=r.score, text=r.text, shown_end_line=r.shown_end_line,
                       shown_start_line=r.shown_start_line, matched_lines=list(r.matched_lines), within=r.within)
               for r in found.results]
    usage = make_usage(input_tokens=found.input_tokens, output_tokens=found.output_tokens,
                       chunks_total=found.found, chunks_returned=len(found.results))
    return CodeSearchResponse(repo=name, results=results, usage=UsageOut(**asdict(usage)), state=found.state,
                              undefined=list(found.caveats.undefined), by_meaning=found.caveats.by_meaning,
                              missing=list(found.caveats.missing), elsewhere=list(found.caveats.elsewhere),
                              vectors_off=found.caveats.vectors_off, foreign_words=found.caveats.foreign_words,
                              outside_path=list(found.caveats.outside_path), listing=found.caveats.listing,
                              between=list(found.caveats.between), absent=list(found.caveats.absent))


def _info(status: RepoStatus) -> RepoInfo:
    return RepoInfo(name=status.name, path=status.path, files=status.files, definitions=status.definitions,
                    state=status.state, head=status.head, indexed_at=status.indexed_at,
                    skipped=status.skipped, progress=RepoProgress(done=status.done, total=status.total,
                                          dropped=status.dropped, vectors_left=status.vectors_left,
                                          read_paths=status.read_paths, dropped_paths=status.dropped_paths),
                    error=status.error, skipped_paths=status.skipped_paths, vectors_off=status.vectors_off)
