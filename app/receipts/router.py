from __future__ import annotations

from fastapi import APIRouter, Depends, Response

from app.api.access import public
from app.core.errors import problem_responses
from app.receipts import keys
from app.receipts.schemas import PublicKey

router = APIRouter(prefix="/v1/receipts", tags=["compliance"],
                   responses=problem_responses(500), dependencies=[Depends(public)])


@router.get("/public-key")
def public_key(response: Response) -> PublicKey:
    """The key that signs receipts, as a JWK (no authentication: auditors verify with it)."""
    response.headers["Cache-Control"] = "public, max-age=300"
    return PublicKey.model_validate(keys.signing_key().public_jwk)
