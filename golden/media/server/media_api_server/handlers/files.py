"""Business logic of the Files operations of Media API.

Written once by apiforge and never overwritten: this file is yours. Implement each method
(remove its `raise NotImplementedError`); until then the operation answers 501. The signatures
come from `media_api_server.interfaces.FilesBase`; `apiforge server` lists the
operations still missing here.
"""

from __future__ import annotations

from typing import Any, Literal  # noqa: F401

from .. import models  # noqa: F401
from ..interfaces import FilesBase
from ..runtime.context import JobContext, Reply, RequestContext  # noqa: F401
from ..runtime.problems import ProblemDetail  # noqa: F401


class FilesHandler(FilesBase):
    async def list_files(
        self,
        ctx: RequestContext,
        *,
        offset: int = 0,
        limit: int = 20,
        sort: Literal["name", "size"] | None = None,
        order: Literal["name", "-name", "size", "-size"] | None = None,
    ) -> models.FileList | Reply[models.FileList]:
        """GET /v1/files: List files

        - security: bearerAuth
        - problem details
        """
        raise NotImplementedError

    async def create_file(
        self,
        ctx: RequestContext,
        *,
        body: models.FileUpload,
    ) -> models.File | Reply[models.File]:
        """POST /v1/files: Create a file from a form

        - security: bearerAuth
        - problem details
        - 415 unless Content-Type is multipart/form-data
        """
        raise NotImplementedError

    async def search_files(
        self,
        ctx: RequestContext,
        *,
        body: models.FileSearch,
    ) -> models.FileList | Reply[models.FileList]:
        """POST /v1/files/search: Search files with a URL-encoded form

        - security: bearerAuth
        - problem details
        - 415 unless Content-Type is application/x-www-form-urlencoded
        """
        raise NotImplementedError

    async def download_file(
        self,
        ctx: RequestContext,
        *,
        file_id: str,
    ) -> None | Reply[None]:
        """GET /v1/files/{fileId}/content: Download a file

        - security: bearerAuth
        - problem details
        """
        raise NotImplementedError

    async def upload_file(
        self,
        ctx: RequestContext,
        *,
        file_id: str,
        upload_session: str | None = None,
        body: bytes,
    ) -> models.File | Reply[models.File]:
        """PUT /v1/files/{fileId}/content: Upload a file's bytes

        - security: bearerAuth
        - problem details
        - 415 unless Content-Type is application/octet-stream
        """
        raise NotImplementedError

    async def list_legacy_files(
        self,
        ctx: RequestContext,
    ) -> list[models.File] | Reply[list[models.File]]:
        """GET /v1/legacy/files: List files (the old way)

        - security: bearerAuth
        - problem details
        """
        raise NotImplementedError
