"""Date and date-time parameters: typed `datetime.date` / `datetime.datetime` (a string still
passes as it is), sent as ISO 8601 dates and RFC 3339 date-times in the path and the query."""

from __future__ import annotations

import datetime
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.client.conftest import Generated, generate

from .test_requests import Recorder

SPEC = """
openapi: 3.1.0
info: {title: Calendar, version: 1.0.0}
paths:
  /days/{day}/events:
    get:
      operationId: listEvents
      tags: [events]
      parameters:
        - {name: day, in: path, required: true, schema: {type: string, format: date}}
        - {name: since, in: query, schema: {type: string, format: date-time}}
      responses: {'204': {description: none}}
"""


@pytest.fixture(scope="module")
def calendar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Generated, Any]]:
    base = tmp_path_factory.mktemp("calendar")
    spec = base / "calendar.yaml"
    spec.write_text(SPEC)
    generated = generate(spec, base / "out")
    sys.path.insert(0, str(generated.out))
    try:
        yield generated, __import__(generated.package)
    finally:
        sys.path.remove(str(generated.out))


def test_dates_are_typed_and_sent_in_iso_form(calendar: tuple[Generated, Any]) -> None:
    generated, module = calendar
    source = (generated.out / generated.package / "resources" / "events.py").read_text()
    assert "day: datetime.date | str," in source
    assert "since: datetime.datetime | str | None = None," in source
    rec = Recorder(*(httpx.Response(204) for _ in range(3)))
    paris = datetime.timezone(datetime.timedelta(hours=2))
    naive = datetime.datetime(2024, 5, 1, 8, 30)
    with module.Client(base_url="http://t", transport=httpx.MockTransport(rec)) as client:
        client.events.list(
            day=datetime.date(2024, 5, 1), since=datetime.datetime(2024, 5, 1, 12, tzinfo=paris)
        )
        client.events.list(day="2024-05-02", since="2024-05-02T00:00:00Z")
        client.events.list(day=datetime.date(2024, 5, 3), since=naive)
    first, second, third = (request.url for request in rec.requests)
    assert first.raw_path == b"/days/2024-05-01/events?since=2024-05-01T12%3A00%3A00%2B02%3A00"
    assert second.raw_path == b"/days/2024-05-02/events?since=2024-05-02T00%3A00%3A00Z"
    # a naive date-time is local time, sent with the local offset (RFC 3339 requires one)
    assert third.params["since"] == naive.astimezone().isoformat()
    assert third.params["since"][-6] in "+-"
