"""What the client cannot express is said (a warning with file:line, and `inspect` lists it),
never dropped silently."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from generator.cli import main

SPEC = """openapi: 3.1.0
info: {title: Gaps, version: 1.0.0}
paths:
  /items/{ids}:
    post:
      operationId: postItems
      parameters:
        - name: ids
          in: path
          required: true
          style: label
          schema: {type: array, items: {type: string}}
        - name: X-Tags
          in: header
          schema: {type: array, items: {type: string}}
        - name: q
          in: query
          style: matrix
          schema: {type: string}
      requestBody:
        content:
          application/json:
            schema: {type: object}
          application/xml:
            schema: {type: object}
      responses:
        '204': {description: ok}
  /report:
    put:
      operationId: putReport
      requestBody:
        content:
          application/xml:
            schema: {type: object, properties: {a: {type: string}}}
      responses:
        '200':
          description: ok
          content:
            application/xml:
              schema: {type: object, properties: {a: {type: string}}}
  /fine:
    get:
      operationId: fine
      parameters:
        - {name: tag, in: query, schema: {type: array, items: {type: string}}}
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: object}}}}
  /forms:
    post:
      operationId: postForm
      requestBody:
        content:
          application/x-www-form-urlencoded:
            encoding:
              point: {style: form, explode: true}
              tags: {style: matrix}
              ghost: {style: deepObject}
              note: {allowReserved: true}
              address: {style: deepObject}
            schema:
              type: object
              properties:
                point: {type: object, properties: {x: {type: integer}}}
                tags: {type: array, items: {type: string}}
                note: {type: string}
                address: {type: object, properties: {city: {type: string}}}
      responses:
        '204': {description: ok}
components:
  securitySchemes:
    mtls: {type: mutualTLS}
"""

EXPECTED = [
    # (line of the spec node, subject, what)
    (71, "security scheme `mtls`", "mutualTLS: the client sends no credential"),
    (57, "POST /forms", "the encoding of form field `ghost` names no property of the body"),
    (58, "POST /forms", "the encoding of form field `note`: `allowReserved` is ignored"),
    (55, "POST /forms", "the encoding of form field `point`: an object in `form` style"),
    (56, "POST /forms", "the encoding of form field `tags`: style `matrix` is sent as `form`"),
    (8, "POST /items/{ids}", "path parameter `ids` is an array: the method takes it as one"),
    (8, "POST /items/{ids}", "path parameter `ids` has style `label`: sent as a plain value"),
    (13, "POST /items/{ids}", "header parameter `X-Tags` is an array"),
    (16, "POST /items/{ids}", "query parameter `q` has style `matrix`, not one for queries"),
    (24, "POST /items/{ids}", "request body `application/xml` is not offered: the method sends"),
    (33, "PUT /report", "request body `application/xml` has a schema the client cannot encode"),
    (39, "PUT /report", "response 200 `application/xml` has a schema: returned as text"),
]


def test_the_generator_warns_with_file_and_line(tmp_path: Path) -> None:
    spec = tmp_path / "gaps.yaml"
    spec.write_text(SPEC)
    result = CliRunner().invoke(main, ["client", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if "cannot express" in line]
    assert len(warnings) == len(EXPECTED), warnings
    for line, (number, subject, what) in zip(warnings, EXPECTED, strict=True):
        assert line.startswith(f"warning: {spec}:{number}: {subject}: "), line
        assert what in line, line
    assert "/fine" not in result.output  # what the client does express is not reported


def test_inspect_lists_them(tmp_path: Path) -> None:
    spec = tmp_path / "gaps.yaml"
    spec.write_text(SPEC)
    runner = CliRunner()
    data = json.loads(runner.invoke(main, ["inspect", str(spec), "--format", "json"]).output)
    assert data["summary"]["client_gaps"] == len(EXPECTED)
    assert [(g["subject"], g["what"][:30]) for g in data["client_gaps"]] == [
        (subject, what[:30]) for _, subject, what in EXPECTED
    ]
    assert data["client_gaps"][5]["where"] == f"{spec}#/paths/~1items~1{{ids}}/post/parameters/0"
    table = runner.invoke(main, ["inspect", str(spec)]).output
    assert f"The generated client cannot express ({len(EXPECTED)}):" in table
    assert f"  {spec}:33: PUT /report: request body `application/xml` has a schema" in table
