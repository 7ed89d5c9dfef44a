"""Service routes: health and who am I."""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter

from folio.entrypoints.api.deps import ContainerDep, ScopeDep, UserDep
from folio.entrypoints.api.schemas import About, Health, Me, errors_for
from folio.entrypoints.serialize import job_dict
from folio.entrypoints.views import JobView

router = APIRouter(prefix="/api/v1", tags=["service"])


@router.get("/health", response_model=Health, responses=errors_for())
def health(container: ContainerDep) -> dict[str, Any]:
    """Liveness: no authentication, no model call. ``worker``: the id of the server process
    that answered (``folio serve --workers N`` runs N of them)."""
    return {
        "status": "ok",
        "provider": container.settings.effective_provider(),
        "worker": os.getpid(),
    }


@router.get("/about", response_model=About, responses=errors_for(401, 503))
def about(container: ContainerDep, user: UserDep) -> dict[str, Any]:
    """What answers here: the folio version, the provider and its model, and the kind of
    database that holds the library (its location stays with the operator)."""
    from folio import __version__

    serving = container.serving()
    return {"version": __version__, **{k: serving[k] for k in ("provider", "model", "database")}}


@router.get("/me", response_model=Me, responses=errors_for(401))
def me(user: UserDep) -> dict[str, Any]:
    return {"user_id": user.user_id, "name": user.name}


@router.get("/jobs/{job_id}", response_model=JobView, responses=errors_for(401, 404, 422, 503))
def get_job(job_id: str, scope: ScopeDep) -> dict[str, Any]:
    """An import job: ``status`` queued | running | done | failed, ``stage``, ``done`` of
    ``total`` steps, the ``book_id``, and ``error`` when it failed."""
    return job_dict(scope.imports.get(job_id))
