"""Every rule, firing and not firing: inline declarations, `$ref`'d ones, path-level ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.lint.config import LintConfig
from generator.lint.engine import lint_path
from generator.lint.registry import all_rules
from tests.lint.conftest import FIXTURES, Linter, header_param, of, ok, rule_ids

ROOT = Path(__file__).resolve().parents[2]
RL = {"X-RateLimit-Limit": None, "X-RateLimit-Remaining": None}


def only(rule: str) -> LintConfig:
    return LintConfig(select=frozenset({rule}))


# --- idempotency ---------------------------------------------------------------------


def test_idempotency_key_missing_fires_on_post_and_unguarded_patch(run_lint: Linter) -> None:
    paths = {
        "/v1/reports": {"post": {"responses": {"201": ok()}}},
        "/v1/users/{id}": {"patch": {"responses": {"200": ok()}}},
    }
    found = of(
        run_lint(paths=paths, config=only("idempotency-key-missing")), "idempotency-key-missing"
    )
    assert [f.message.split(":")[0] for f in found] == ["POST /v1/reports", "PATCH /v1/users/{id}"]
    assert "add an `Idempotency-Key` header parameter" in found[0].message
    assert found[0].pointer == "/paths/~1v1~1reports/post"


@pytest.mark.parametrize(
    "paths",
    [
        # inline
        {
            "/a": {
                "post": {
                    "parameters": [header_param("Idempotency-Key")],
                    "responses": {"201": ok()},
                }
            }
        },
        # case-insensitive, via $ref
        {
            "/a": {
                "post": {
                    "parameters": [{"$ref": "#/components/parameters/Key"}],
                    "responses": {"201": ok()},
                }
            }
        },
        # at path-item level
        {
            "/a": {
                "parameters": [header_param("idempotency-key")],
                "post": {"responses": {"201": ok()}},
            }
        },
        # a PATCH guarded by If-Match, a read-like POST, a GET
        {
            "/a": {
                "patch": {
                    "parameters": [header_param("If-Match", True)],
                    "responses": {"200": ok()},
                }
            }
        },
        {"/a/search": {"post": {"responses": {"200": ok()}}}},
        {"/a": {"get": {"responses": {"200": ok()}}}},
    ],
)
def test_idempotency_key_missing_quiet(run_lint: Linter, paths: dict[str, object]) -> None:
    components = {"parameters": {"Key": header_param("IDEMPOTENCY-KEY")}}
    result = run_lint(paths=paths, components=components, config=only("idempotency-key-missing"))
    assert result.findings == ()


def test_idempotency_responses_missing(run_lint: Linter) -> None:
    key = {"$ref": "#/components/parameters/Key"}
    paths = {
        "/a": {"post": {"parameters": [key], "responses": {"201": ok()}}},
        "/b": {"post": {"parameters": [key], "responses": {"201": ok(), "409": ok()}}},
        "/c": {"post": {"parameters": [key], "responses": {"201": ok(), "409": ok(), "422": ok()}}},
    }
    components = {"parameters": {"Key": header_param("Idempotency-Key", True)}}
    found = of(
        run_lint(paths=paths, components=components, config=only("idempotency-responses-missing")),
        "idempotency-responses-missing",
    )
    assert len(found) == 2
    a, b = sorted(found, key=lambda f: f.message)
    assert a.message.startswith("POST /a:") and "`409`" in a.message and "`422`" in a.message
    assert b.message.startswith("POST /b:") and "`409`" not in b.message and "`422`" in b.message
    # the shared parameter is where both findings point, each naming its operation
    assert a.pointer == b.pointer == "/components/parameters/Key"


# --- rate limits -----------------------------------------------------------------------


def test_rate_limit_headers_missing(run_lint: Linter) -> None:
    components = {
        "headers": {"Limit": {"schema": {"type": "integer"}}},
        "responses": {
            "Limited": {
                "description": "x",
                "headers": {"RateLimit": {"$ref": "#/components/headers/Limit"}},
            }
        },
    }
    paths = {
        "/bare": {"get": {"responses": {"200": ok(), "404": ok()}}},
        "/legacy": {"get": {"responses": {"200": ok(headers=RL)}}},
        "/ietf": {"get": {"responses": {"200": {"$ref": "#/components/responses/Limited"}}}},
    }
    found = of(
        run_lint(paths=paths, components=components, config=only("rate-limit-headers-missing")),
        "rate-limit-headers-missing",
    )
    assert len(found) == 1
    assert found[0].message.startswith("GET /bare: add rate-limit headers to the 200 response")
    assert found[0].pointer == "/paths/~1bare/get/responses/200"


def test_rate_limit_429_missing(run_lint: Linter) -> None:
    paths = {
        "/a": {"get": {"responses": {"200": ok(headers=RL)}}},
        "/b": {
            "get": {"responses": {"200": ok(headers=RL), "429": ok(headers={"Retry-After": None})}}
        },
        "/c": {"get": {"responses": {"200": ok()}}},
    }
    found = of(
        run_lint(paths=paths, config=only("rate-limit-429-missing")), "rate-limit-429-missing"
    )
    assert [f.message.split(":")[0] for f in found] == ["GET /a"]
    assert "`429`" in found[0].message
    assert found[0].pointer == "/paths/~1a/get/responses"


def test_retry_after_missing(run_lint: Linter) -> None:
    components = {
        "headers": {"RetryAfter": {"schema": {"type": "integer"}}},
        "responses": {
            "Busy": {
                "description": "x",
                "headers": {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}},
            },
            "Down": {"description": "down"},
        },
    }
    paths = {
        "/a": {
            "get": {
                "responses": {
                    "200": ok(),
                    "429": ok(),
                    "503": {"$ref": "#/components/responses/Down"},
                }
            }
        },
        "/b": {"get": {"responses": {"200": ok(), "429": {"$ref": "#/components/responses/Busy"}}}},
    }
    result = run_lint(paths=paths, components=components, config=only("retry-after-missing"))
    found = of(result, "retry-after-missing")
    assert sorted(f.pointer for f in found) == [
        "/components/responses/Down",
        "/paths/~1a/get/responses/429",
    ]
    assert all(f.severity == "error" for f in found)
    assert any("503 response" in f.message and f.message.startswith("GET /a") for f in found)


def test_rate_limit_header_family_mixed(run_lint: Linter) -> None:
    draft = {"RateLimit-Limit": None, "RateLimit-Remaining": None}
    paths = {
        "/a": {"get": {"responses": {"200": ok(headers=RL)}}},
        "/b": {"get": {"responses": {"200": ok(headers=RL)}}},
        "/c": {"get": {"responses": {"200": ok(headers=draft)}}},
    }
    found = of(
        run_lint(paths=paths, config=only("rate-limit-header-family-mixed")),
        "rate-limit-header-family-mixed",
    )
    assert len(found) == 1 and found[0].message.startswith("GET /c: publishes `RateLimit-Limit`")
    assert found[0].severity == "info"
    assert found[0].pointer == "/paths/~1c/get/responses/200/headers/RateLimit-Limit"


def test_rate_limit_header_family_consistent_pairs_are_fine(run_lint: Linter) -> None:
    both = {**RL, "RateLimit": None, "RateLimit-Policy": None}
    paths = {p: {"get": {"responses": {"200": ok(headers=both)}}} for p in ("/a", "/b")}
    assert run_lint(paths=paths, config=only("rate-limit-header-family-mixed")).findings == ()


# --- concurrency -----------------------------------------------------------------------


def test_etag_missing(run_lint: Linter) -> None:
    paths = {
        "/a/{id}": {"get": {"responses": {"200": ok()}}, "patch": {"responses": {"200": ok()}}},
        "/b/{id}": {
            "get": {"responses": {"200": ok(headers={"ETag": None})}},
            "put": {"responses": {"200": ok()}},
        },
        "/c/{id}": {"get": {"responses": {"200": ok()}}, "delete": {"responses": {"204": ok()}}},
    }
    found = of(run_lint(paths=paths, config=only("etag-missing")), "etag-missing")
    assert len(found) == 1
    assert found[0].message.startswith(
        "GET /a/{id}: add an `ETag` header to the 200 response; PATCH"
    )
    assert found[0].pointer == "/paths/~1a~1{id}/get/responses/200"


def test_if_match_missing(run_lint: Linter) -> None:
    etag_get = {"responses": {"200": {"$ref": "#/components/responses/WithETag"}}}
    components = {"responses": {"WithETag": ok(headers={"ETag": None})}}
    paths = {
        "/a/{id}": {
            "get": etag_get,
            "patch": {"responses": {"200": ok()}},
            "delete": {"responses": {"204": ok()}},
        },
        # If-Match declared once, at path-item level
        "/b/{id}": {
            "parameters": [header_param("If-Match")],
            "get": etag_get,
            "put": {"responses": {"200": ok()}},
        },
        # the GET sends no ETag: nothing to match
        "/c/{id}": {"get": {"responses": {"200": ok()}}, "patch": {"responses": {"200": ok()}}},
    }
    found = of(
        run_lint(paths=paths, components=components, config=only("if-match-missing")),
        "if-match-missing",
    )
    assert sorted(f.message.split(":")[0] for f in found) == ["DELETE /a/{id}", "PATCH /a/{id}"]


def test_precondition_responses_missing(run_lint: Linter) -> None:
    paths = {
        "/a": {"put": {"parameters": [header_param("If-Match", True)], "responses": {"200": ok()}}},
        "/b": {
            "get": {
                "parameters": [header_param("If-None-Match")],
                "responses": {"200": ok(headers={"ETag": None})},
            }
        },
        "/c": {"put": {"parameters": [header_param("If-None-Match")], "responses": {"201": ok()}}},
        "/ok": {
            "parameters": [header_param("If-Match", True)],
            "delete": {"responses": {"204": ok(), "412": ok(), "428": ok()}},
        },
        "/ok2": {
            "get": {
                "parameters": [header_param("If-None-Match")],
                "responses": {"200": ok(), "304": ok()},
            }
        },
    }
    found = of(
        run_lint(paths=paths, config=only("precondition-responses-missing")),
        "precondition-responses-missing",
    )
    got = sorted((f.message.split(":")[0], f.message.split("add a ")[1][:5]) for f in found)
    assert got == [
        ("GET /b", "`304`"),
        ("PUT /a", "`412`"),
        ("PUT /a", "`428`"),
        ("PUT /c", "`412`"),
    ]
    assert all(f.pointer.endswith("/parameters/0") for f in found)


# --- async jobs ------------------------------------------------------------------------


def test_async_rules(run_lint: Linter) -> None:
    paths = {
        "/bare": {"post": {"responses": {"202": ok()}}},
        "/half": {"post": {"responses": {"202": ok(headers={"Location": None})}}},
        "/full": {
            "post": {"responses": {"202": ok(headers={"Location": None, "Retry-After": None})}}
        },
        "/jobs/{jobId}": {"get": {"responses": {"200": ok()}}},
    }
    config = LintConfig(select=frozenset({"async-location-missing", "async-retry-after-missing"}))
    result = run_lint(paths=paths, config=config)
    assert [(f.rule, f.message.split(":")[0]) for f in result.findings] == [
        ("async-location-missing", "POST /bare"),
        ("async-retry-after-missing", "POST /bare"),
        ("async-retry-after-missing", "POST /half"),
    ]
    assert "`/jobs/{jobId}`" in result.findings[0].message
    assert result.findings[0].severity == "error"


# --- problem details -------------------------------------------------------------------


def test_problem_details_missing(run_lint: Linter) -> None:
    json_error = {
        "description": "x",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
    charset = {"description": "x", "content": {"application/problem+json; charset=utf-8": {}}}
    paths = {
        "/a": {
            "get": {
                "responses": {
                    "200": ok(),
                    "400": json_error,
                    "404": {"description": "no body"},
                    "429": ok(problem=True),
                    "500": charset,
                    "default": json_error,
                }
            }
        }
    }
    found = of(
        run_lint(paths=paths, config=only("problem-details-missing")), "problem-details-missing"
    )
    assert [f.message for f in found] == [
        "GET /a: the 400 response declares `application/json`; add `application/problem+json` "
        "with an RFC 9457 problem document (type, title, status, detail)",
        "GET /a: the 404 response declares no body; add `application/problem+json` "
        "with an RFC 9457 problem document (type, title, status, detail)",
    ]


def test_invalid_input_response_missing(run_lint: Linter) -> None:
    query = {"name": "q", "in": "query", "schema": {"type": "string"}}
    body = {"content": {"application/json": {"schema": {"type": "object"}}}}
    paths = {
        "/none": {"get": {"responses": {"200": ok()}}},  # takes nothing
        "/query": {"get": {"parameters": [query], "responses": {"200": ok(), "404": ok()}}},
        "/body": {"post": {"requestBody": body, "responses": {"201": ok()}}},
        "/path/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {}}],
            "get": {"responses": {"200": ok()}},
        },
        "/has400": {"post": {"requestBody": body, "responses": {"400": ok(problem=True)}}},
        "/has422": {"post": {"requestBody": body, "responses": {"422": ok(problem=True)}}},
        "/has4XX": {"get": {"parameters": [query], "responses": {"4XX": ok(problem=True)}}},
        "/default": {"get": {"parameters": [query], "responses": {"default": ok()}}},
    }
    rule = "invalid-input-response-missing"
    found = of(run_lint(paths=paths, config=only(rule)), rule)
    assert [f.message for f in found] == [
        "GET /query: takes parameters but declares no response for invalid input; add `422` "
        "(or `400`) with an `application/problem+json` body listing what is wrong",
        "POST /body: takes a body but declares no response for invalid input; add `422` (or "
        "`400`) with an `application/problem+json` body listing what is wrong",
        "GET /path/{id}: takes parameters but declares no response for invalid input; add "
        "`422` (or `400`) with an `application/problem+json` body listing what is wrong",
    ]
    assert found[1].pointer == "/paths/~1body/post/responses"


# --- webhooks --------------------------------------------------------------------------


def _hook(
    params: list[object] | None = None, props: dict[str, object] | None = None, **item: object
) -> dict[str, object]:
    body = {
        "content": {"application/json": {"schema": {"type": "object", "properties": props or {}}}}
    }
    return {
        **item,
        "post": {"parameters": params or [], "requestBody": body, "responses": {"200": ok()}},
    }


def test_webhook_rules(run_lint: Linter) -> None:
    signed = [header_param("webhook-signature"), header_param("webhook-timestamp")]
    hooks = {
        "bare": _hook(props={"name": {"type": "string"}}),
        "signed.no-id": _hook(signed, props={"name": {"type": "string"}}),
        "id-header": _hook([*signed, header_param("webhook-id")]),
        # declared at path-item level
        "path-level": _hook(props={"id": {"type": "string"}}, parameters=signed),
        "ref-payload": {
            "post": {
                "parameters": signed,
                "requestBody": {
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Event"}}
                    }
                },
                "responses": {"200": ok()},
            }
        },
    }
    components = {
        "schemas": {
            "Event": {"allOf": [{"$ref": "#/components/schemas/Base"}]},
            "Base": {"properties": {"id": {}}},
        }
    }
    config = LintConfig(select=frozenset({"webhook-signature-missing", "webhook-id-missing"}))
    result = run_lint(webhooks=hooks, components=components, config=config)
    got = sorted((f.rule, f.webhook) for f in result.findings)
    assert got == [
        ("webhook-id-missing", "bare"),
        ("webhook-id-missing", "signed.no-id"),
        ("webhook-signature-missing", "bare"),
    ]
    assert all(f.message.startswith("webhook `") for f in result.findings)


def test_callbacks_are_webhooks(run_lint: Linter) -> None:
    callback = {"{$request.body#/callbackUrl}": _hook(props={"id": {}})}
    paths = {"/jobs": {"post": {"callbacks": {"done": callback}, "responses": {"202": ok()}}}}
    found = of(
        run_lint(paths=paths, config=only("webhook-signature-missing")), "webhook-signature-missing"
    )
    assert len(found) == 1 and found[0].message.startswith("callback `post_jobs.done` (POST)")


# --- the example specs and a multi-file spec -------------------------------------------


def test_bare_triggers_every_rule() -> None:
    result = lint_path(str(ROOT / "specs" / "bare.yaml"), LintConfig())
    assert set(rule_ids(result)) == {r.id for r in all_rules()}


def test_acme_is_clean() -> None:
    result = lint_path(str(ROOT / "specs" / "acme.yaml"), LintConfig())
    assert result.findings == ()
    assert len(result.rules_run) == len(all_rules())


def test_findings_in_another_file_name_the_operations_that_use_the_node() -> None:
    spec = FIXTURES / "multifile" / "openapi.yaml"
    result = lint_path(
        str(spec),
        LintConfig(
            select=frozenset(
                {"retry-after-missing", "idempotency-responses-missing", "async-location-missing"}
            )
        ),
    )
    common = str(FIXTURES / "multifile" / "common.yaml")
    retry = of(result, "retry-after-missing")
    assert {(f.file, f.line, f.column, f.pointer) for f in retry} == {
        (common, 19, 5, "/components/responses/TooManyRequests")
    }
    assert sorted(f.message.split(":")[0] for f in retry) == [
        "POST /batches",
        "POST /others",
        "POST /things",
    ]
    idem = of(result, "idempotency-responses-missing")
    assert {(f.file, f.line, f.column) for f in idem} == {(common, 3, 5)}
    assert sorted(f.operation.id for f in idem if f.operation) == ["createOther", "createThing"]
    # the path item lives in a third file; its path-level Idempotency-Key counts, its 202 is located there
    (location,) = of(result, "async-location-missing")
    assert location.file == str(FIXTURES / "multifile" / "paths" / "batches.yaml")
    assert (location.line, location.column, location.pointer) == (6, 5, "/post/responses/202")


def test_async_job_status_and_cancel_operations_follow_each_api(run_lint: Linter) -> None:
    """A 202's status operation is the nearest `GET …/jobs/{id}`; its cancel operation the
    `DELETE` on that path or, failing that, `POST` on it + `/cancel` — looked up in the API
    being linted, not in one linted before (the lookups are made once per API)."""

    def jobs(cancel: str) -> dict[str, object]:
        paths: dict[str, object] = {
            "/v1/exports": {"post": {"responses": {"202": ok()}}},
            "/v1/exports/{id}": {"get": {"operationId": "getExport", "responses": {"200": ok()}}},
            "/v1/other/jobs/{id}": {"get": {"operationId": "otherJob", "responses": {"200": ok()}}},
        }
        if cancel == "post":
            paths["/v1/exports/{id}/cancel"] = {
                "post": {"operationId": "cancelByPost", "responses": {"200": ok()}}
            }
        if cancel == "delete":
            item = paths["/v1/exports/{id}"]
            assert isinstance(item, dict)
            item["delete"] = {"operationId": "cancelByDelete", "responses": {"204": ok()}}
        return paths

    for cancel, expected in (
        ("post", "cancelByPost"),
        ("none", None),
        ("delete", "cancelByDelete"),
    ):
        result = run_lint(paths=jobs(cancel))
        submit = next(o for o in result.api.operations if o.method == "post" and o.response("202"))
        job = submit.patterns.async_job
        assert job is not None
        assert (job.status_operation, job.cancel_operation) == ("getExport", expected)
