"""Service routes: health and who am I."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from folio.entrypoints.api.deps import ContainerDep, UserDep

router = APIRouter(prefix="/api/v1", tags=["service"])


@router.get("/health")
def health(container: ContainerDep) -> dict[str, Any]:
    """Liveness: no authentication, no model call."""
    return {"status": "ok", "provider": container.settings.effective_provider()}


@router.get("/me")
def me(user: UserDep) -> dict[str, Any]:
    return {"user_id": user.user_id, "name": user.name}
