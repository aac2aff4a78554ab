"""Business logic of the pets operations of Pet Clinic API (Swagger 2.0).

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `pet_clinic_api_swagger_2_0_server.interfaces.PetsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import PetsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class PetsHandler(PetsBase):
    async def list_pets(
        self,
        ctx: RequestContext,
        *,
        species: list[Literal["cat", "dog", "bird"]] | None = None,
        fields: list[str] | None = None,
        legacy_tags: list[str] | None = None,
        limit: int = 20,
    ) -> list[models.Pet] | Reply[list[models.Pet]]:
        """GET /pets: List pets

        - security: apiKey
        - problem details
        - rate limit (X-RateLimit-Limit/-Remaining/-Reset; 429 + Retry-After)
        """
        raise NotImplementedError

    async def create_pet(
        self,
        ctx: RequestContext,
        *,
        body: models.NewPet,
    ) -> models.Pet | Reply[models.Pet]:
        """POST /pets: Register a pet

        - security: oauth [pets:write]
        - problem details
        - idempotency (Idempotency-Key, required)
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def get_pet(
        self,
        ctx: RequestContext,
        *,
        pet_id: str,
    ) -> models.Pet | Reply[models.Pet]:
        """GET /pets/{petId}: Get a pet

        - security: apiKey
        - problem details
        - ETag; If-None-Match → 304
        """
        raise NotImplementedError

    async def update_pet(
        self,
        ctx: RequestContext,
        *,
        pet_id: str,
        body: models.NewPet,
    ) -> models.Pet | Reply[models.Pet]:
        """PUT /pets/{petId}: Replace a pet

        - security: apiKey
        - problem details
        - If-Match → 412 when stale; 428 when missing
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def upload_photo(
        self,
        ctx: RequestContext,
        *,
        pet_id: str,
        body: models.UploadPhotoRequest,
    ) -> models.Pet | Reply[models.Pet]:
        """POST /pets/{petId}/photo: Upload a photo of a pet

        - security: apiKey
        - problem details
        - 415 unless Content-Type is multipart/form-data
        """
        raise NotImplementedError
