"""Business logic of the Documents operations of Bare API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `bare_api_server.interfaces.DocumentsBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..events import events  # noqa: F401
from ..interfaces import DocumentsBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class DocumentsHandler(DocumentsBase):
    async def get_document(
        self,
        ctx: RequestContext,
        *,
        document_id: str,
    ) -> models.Document | Reply[models.Document]:
        """GET /documents/{documentId}: Get a document

        - problem details
        - ETag; If-None-Match → 304
        """
        raise NotImplementedError

    async def replace_document(
        self,
        ctx: RequestContext,
        *,
        document_id: str,
        body: models.DocumentInput,
    ) -> models.Document | Reply[models.Document]:
        """PUT /documents/{documentId}: Replace a document

        - problem details
        - If-Match → 412 when stale; 428 when missing
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError

    async def delete_document(
        self,
        ctx: RequestContext,
        *,
        document_id: str,
    ) -> None | Reply[None]:
        """DELETE /documents/{documentId}: Delete a document

        - problem details
        - If-Match → 412 when stale
        """
        raise NotImplementedError

    async def patch_document(
        self,
        ctx: RequestContext,
        *,
        document_id: str,
        body: models.DocumentInput,
    ) -> models.Document | Reply[models.Document]:
        """PATCH /documents/{documentId}: Change part of a document

        - problem details
        - 415 unless Content-Type is application/json
        """
        raise NotImplementedError
