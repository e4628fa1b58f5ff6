"""Typed dependencies: the engine and the caller's tenant, read from app.state."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Path, Request

from .engine import Engine, EngineHolder
from .errors import Unauthorized
from .schemas import MAX_NAME_CHARS, NAME_PATTERN

DEFAULT_TENANT = "default"


def get_engine(request: Request) -> Engine:
    holder: EngineHolder = request.app.state.engine
    return holder.get()


def get_tenant(request: Request) -> str:
    keys: dict[str, str] = request.app.state.api_keys
    if not keys:
        return DEFAULT_TENANT
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
    tenant = None
    for key, owner in keys.items():  # compare against every key, in constant time each
        if hmac.compare_digest(key.encode(), token.strip().encode()):
            tenant = owner
    if tenant is None:
        raise Unauthorized("invalid API key")
    return tenant


EngineDep = Annotated[Engine, Depends(get_engine)]
NamePath = Annotated[str, Path(min_length=1, max_length=MAX_NAME_CHARS, pattern=NAME_PATTERN)]
TenantDep = Annotated[str, Depends(get_tenant)]
