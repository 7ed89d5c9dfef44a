"""``GET /metrics``: the server's Prometheus metrics (text format), for a scraper.

Who may read them: a bearer token equal to the ``metrics_token`` setting (for the scraper), or
whoever may use the API (any user's token once users exist; without users the server is the local
user's and binds loopback only). Anyone else gets 401. A server built without Prometheus telemetry
(a test's app on a container of its own) answers 404.
"""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request, Response

from folio.adapters.observability.metrics import PrometheusTelemetry
from folio.entrypoints.api.deps import ContainerDep
from folio.entrypoints.api.errors import ApiError
from folio.entrypoints.api.schemas import errors_for, text_body

router = APIRouter(tags=["operations"])


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {"text/plain": text_body("Prometheus' text format")}},
        **errors_for(401, 404),
    },
)
def metrics(request: Request, container: ContainerDep) -> Response:
    """The Prometheus metrics of every worker of this server."""
    authorization = request.headers.get("authorization", "")
    if not _metrics_token_matches(authorization, container.settings.metrics_token):
        container.users.authenticate_header(authorization)  # 401 without a user's token
    telemetry = container.telemetry
    if not isinstance(telemetry, PrometheusTelemetry):
        raise ApiError(404, "NOT_FOUND", "This server collects no metrics")
    body, content_type = telemetry.render()
    return Response(body, media_type=content_type)


def _metrics_token_matches(authorization: str, expected: str | None) -> bool:
    scheme, _, token = authorization.partition(" ")
    if expected is None or scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(token.strip().encode(), expected.encode())
