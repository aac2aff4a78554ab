"""Planted changes: one base spec, and for every change kind a variant with exactly that
change. The diff finds it, classifies it, locates it in both files, and finds nothing else;
identical, reformatted and description-only variants give no breaking change."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.diff.engine import run_diff
from generator.diff.kinds import all_kinds, kinds_by_id

BASE = Path(__file__).with_name("base.yaml")
Spec = dict[str, Any]


def base() -> Spec:
    data: Spec = yaml.safe_load(BASE.read_text(encoding="utf-8"))
    return data


def _paths(spec: Spec) -> Spec:
    paths: Spec = spec["paths"]
    return paths


def _schemas(spec: Spec) -> Spec:
    schemas: Spec = spec["components"]["schemas"]
    return schemas


def _param(op: Spec, name: str) -> Spec:
    found: Spec = next(p for p in op["parameters"] if p["name"] == name)
    return found


def _list(spec: Spec) -> Spec:
    op: Spec = _paths(spec)["/v1/customers"]["get"]
    return op


def _create(spec: Spec) -> Spec:
    op: Spec = _paths(spec)["/v1/customers"]["post"]
    return op


def _hook(spec: Spec) -> Spec:
    op: Spec = spec["webhooks"]["customerCreated"]["post"]
    return op


def _remove_ping(s: Spec) -> None:
    del _paths(s)["/v1/ping"]


def _remove_legacy(s: Spec) -> None:
    del _paths(s)["/v1/legacy"]


def _move_ping(s: Spec) -> None:
    _paths(s)["/v1/health"] = _paths(s).pop("/v1/ping")


def _rename_path_param(s: Spec) -> None:
    item = _paths(s).pop("/v1/reports/{report}")
    _param(item["get"], "report")["name"] = "id"
    _paths(s)["/v1/reports/{id}"] = item


def _add_operation(s: Spec) -> None:
    _paths(s)["/v1/ping"]["head"] = {
        "operationId": "headPing",
        "responses": {"200": {"description": "ok"}},
    }


def _deprecate(s: Spec) -> None:
    _paths(s)["/v1/ping"]["get"]["deprecated"] = True


def _add_param(required: bool) -> Callable[[Spec], None]:
    def change(s: Spec) -> None:
        _list(s)["parameters"].append(
            {"name": "region", "in": "query", "required": required, "schema": {"type": "string"}}
        )

    return change


def _remove_param(s: Spec) -> None:
    _list(s)["parameters"] = [p for p in _list(s)["parameters"] if p["name"] != "email"]


def _move_param(s: Spec) -> None:
    _param(_list(s), "email")["in"] = "header"


def _require_param(s: Spec) -> None:
    _param(_list(s), "email")["required"] = True


def _retype_param(s: Spec) -> None:
    _param(_list(s), "email")["schema"] = {"type": "integer"}


def _narrow_param_enum(s: Spec) -> None:
    _param(_list(s), "status")["schema"]["enum"] = ["active"]


def _lower_max_length(s: Spec) -> None:
    _param(_list(s), "email")["schema"]["maxLength"] = 100


def _add_pattern(s: Spec) -> None:
    _param(_list(s), "email")["schema"]["pattern"] = "^[^@]+@[^@]+$"


def _require_body(s: Spec) -> None:
    _paths(s)["/v1/customers/{customer}"]["put"]["requestBody"]["required"] = True


def _remove_request_media(s: Spec) -> None:
    del _create(s)["requestBody"]["content"]["application/x-www-form-urlencoded"]


def _create_schema(s: Spec) -> Spec:
    schema: Spec = _schemas(s)["CustomerCreate"]
    return schema


def _add_required_property(s: Spec) -> None:
    _create_schema(s)["properties"]["country"] = {"type": "string"}
    _create_schema(s)["required"].append("country")


def _require_property(s: Spec) -> None:
    _create_schema(s)["required"].append("name")


def _remove_request_property(s: Spec) -> None:
    del _create_schema(s)["properties"]["name"]


def _add_optional_property(s: Spec) -> None:
    _create_schema(s)["properties"]["country"] = {"type": "string"}


def _retype_request_property(s: Spec) -> None:
    _create_schema(s)["properties"]["name"] = {"type": "integer"}


def _narrow_request_enum(s: Spec) -> None:
    _create_schema(s)["properties"]["plan"]["enum"] = ["pro"]


def _raise_minimum(s: Spec) -> None:
    _create_schema(s)["properties"]["age"]["minimum"] = 18


def _request_pattern(s: Spec) -> None:
    _create_schema(s)["properties"]["name"]["pattern"] = "^[A-Z]"


def _remove_success_status(s: Spec) -> None:
    responses = _paths(s)["/v1/reports/{report}"]["get"]["responses"]
    responses["203"] = responses.pop("200")


def _remove_error_status(s: Spec) -> None:
    del _create(s)["responses"]["400"]


def _remove_response_media(s: Spec) -> None:
    del _paths(s)["/v1/customers/{customer}"]["get"]["responses"]["200"]["content"][
        "application/xml"
    ]


def _customer(s: Spec) -> Spec:
    schema: Spec = _schemas(s)["Customer"]
    return schema


def _remove_response_property(s: Spec) -> None:
    del _customer(s)["properties"]["name"]


def _unrequire_response_property(s: Spec) -> None:
    _customer(s)["required"].remove("email")


def _nullable_response(s: Spec) -> None:
    _customer(s)["properties"]["name"]["type"] = ["string", "null"]


def _retype_response(s: Spec) -> None:
    _customer(s)["properties"]["balance"]["type"] = "string"


def _response_enum_value(s: Spec) -> None:
    _customer(s)["properties"]["status"]["enum"].append("suspended")


def _add_response_property(s: Spec) -> None:
    _customer(s)["properties"]["phone"] = {"type": "string"}


def _secure_ping(s: Spec) -> None:
    _paths(s)["/v1/ping"]["get"]["security"] = [{"oauth": ["customers.read"]}]


def _add_scope(s: Spec) -> None:
    _create(s)["security"] = [{"oauth": ["customers.write", "customers.admin"]}]


def _remove_server(s: Spec) -> None:
    s["servers"].pop()


def _remove_idempotency_key(s: Spec) -> None:
    _create(s)["parameters"] = []


def _require_idempotency_key(s: Spec) -> None:
    _param(_create(s), "Idempotency-Key")["required"] = True


def _add_idempotency_key(s: Spec) -> None:
    _reports(s)["parameters"] = [
        {"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"}}
    ]


def _remove_409(s: Spec) -> None:
    del _create(s)["responses"]["409"]


def _list_200(s: Spec) -> Spec:
    response: Spec = _list(s)["responses"]["200"]
    return response


def _remove_rate_limit(s: Spec) -> None:
    del _list_200(s)["headers"]


def _change_rate_family(s: Spec) -> None:
    _list_200(s)["headers"] = {
        "RateLimit-Limit": {"schema": {"type": "integer"}},
        "RateLimit-Remaining": {"schema": {"type": "integer"}},
        "RateLimit-Reset": {"schema": {"type": "integer"}},
    }


def _remove_429(s: Spec) -> None:
    del _list(s)["responses"]["429"]


def _remove_retry_after(s: Spec) -> None:
    del _list(s)["responses"]["429"]["headers"]


def _remove_etag(s: Spec) -> None:
    del _paths(s)["/v1/customers/{customer}"]["get"]["responses"]["200"]["headers"]


def _require_if_match(s: Spec) -> None:
    _param(_paths(s)["/v1/customers/{customer}"]["put"], "If-Match")["required"] = True


def _reports(s: Spec) -> Spec:
    op: Spec = _paths(s)["/v1/reports"]["post"]
    return op


def _make_sync(s: Spec) -> None:
    _reports(s)["responses"] = {"200": {"description": "Done."}}


def _make_async(s: Spec) -> None:
    _paths(s)["/v1/ping"]["get"]["responses"] = {
        "202": {"description": "Accepted.", "headers": {"Location": {"schema": {"type": "string"}}}}
    }


def _remove_location(s: Spec) -> None:
    del _reports(s)["responses"]["202"]["headers"]["Location"]


def _remove_202_retry_after(s: Spec) -> None:
    del _reports(s)["responses"]["202"]["headers"]["Retry-After"]


def _change_signature(s: Spec) -> None:
    _param(_hook(s), "webhook-signature")["name"] = "X-Hub-Signature-256"


def _remove_webhook_id(s: Spec) -> None:
    _hook(s)["parameters"] = [p for p in _hook(s)["parameters"] if p["name"] != "webhook-id"]


def _narrow_payload(s: Spec) -> None:
    schema = _hook(s)["requestBody"]["content"]["application/json"]["schema"]
    del schema["properties"]["type"]
    schema["required"].remove("type")


def _remove_webhook(s: Spec) -> None:
    del s["webhooks"]


def _change_pagination(s: Spec) -> None:
    _list(s)["parameters"] = [p for p in _list(s)["parameters"] if p["name"] != "starting_after"]


PLANTED: dict[str, Callable[[Spec], None]] = {
    "operation-removed": _remove_ping,
    "deprecated-operation-removed": _remove_legacy,
    "operation-moved": _move_ping,
    "path-parameter-renamed": _rename_path_param,
    "operation-added": _add_operation,
    "operation-deprecated": _deprecate,
    "parameter-added-required": _add_param(True),
    "parameter-added-optional": _add_param(False),
    "parameter-removed": _remove_param,
    "parameter-moved": _move_param,
    "parameter-became-required": _require_param,
    "parameter-type-changed": _retype_param,
    "parameter-enum-narrowed": _narrow_param_enum,
    "parameter-constraint-narrowed": _lower_max_length,
    "parameter-pattern-added": _add_pattern,
    "request-body-became-required": _require_body,
    "request-media-type-removed": _remove_request_media,
    "request-property-added-required": _add_required_property,
    "request-property-became-required": _require_property,
    "request-property-removed": _remove_request_property,
    "request-property-added-optional": _add_optional_property,
    "request-type-changed": _retype_request_property,
    "request-enum-narrowed": _narrow_request_enum,
    "request-constraint-narrowed": _raise_minimum,
    "request-pattern-added": _request_pattern,
    "response-status-removed": _remove_success_status,
    "error-response-removed": _remove_error_status,
    "response-media-type-removed": _remove_response_media,
    "response-property-removed": _remove_response_property,
    "response-property-became-optional": _unrequire_response_property,
    "response-property-became-nullable": _nullable_response,
    "response-type-changed": _retype_response,
    "response-enum-value-added": _response_enum_value,
    "response-property-added": _add_response_property,
    "security-requirement-added": _secure_ping,
    "security-scope-added": _add_scope,
    "server-removed": _remove_server,
    "idempotency-key-removed": _remove_idempotency_key,
    "idempotency-key-required": _require_idempotency_key,
    "idempotency-key-added": _add_idempotency_key,
    "idempotency-response-removed": _remove_409,
    "rate-limit-headers-removed": _remove_rate_limit,
    "rate-limit-family-changed": _change_rate_family,
    "rate-limit-429-removed": _remove_429,
    "retry-after-removed": _remove_retry_after,
    "etag-removed": _remove_etag,
    "if-match-required": _require_if_match,
    "async-became-sync": _make_sync,
    "sync-became-async": _make_async,
    "async-location-removed": _remove_location,
    "async-retry-after-removed": _remove_202_retry_after,
    "webhook-signature-changed": _change_signature,
    "webhook-id-removed": _remove_webhook_id,
    "webhook-payload-narrowed": _narrow_payload,
    "webhook-removed": _remove_webhook,
    "pagination-changed": _change_pagination,
}


def write(tmp_path: Path, name: str, data: Spec, as_json: bool = False) -> str:
    path = tmp_path / (name + (".json" if as_json else ".yaml"))
    text = json.dumps(data, indent=1) if as_json else yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_every_kind_is_planted() -> None:
    assert set(PLANTED) == {k.id for k in all_kinds()}


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_planted_change_is_found_alone(kind: str, tmp_path: Path) -> None:
    variant = copy.deepcopy(base())
    PLANTED[kind](variant)
    old = write(tmp_path, "old", base())
    new = write(tmp_path, "new", variant)
    result = run_diff(old, new)
    found = [(c.kind, c.message) for c in result.changes]
    assert [k for k, _ in found] == [kind], found
    change = result.changes[0]
    assert change.level == kinds_by_id()[kind].level
    # located in both files (the nearest node for the side that lacks it)
    assert change.new_file == new and change.new_line > 0
    if kind not in ("operation-added",):
        assert change.old_file == old and change.old_line > 0
    if change.level == "breaking":
        assert change.client, "a breaking change names what it changes in the client"
        assert result.bump == "major"
    else:
        assert result.bump == "minor"


def test_client_effect_names_method_and_argument(tmp_path: Path) -> None:
    variant = copy.deepcopy(base())
    _remove_param(variant)
    result = run_diff(write(tmp_path, "old", base()), write(tmp_path, "new", variant))
    assert result.changes[0].client == ("client.customers.list(email=…)",)


def test_shared_schema_change_names_every_operation(tmp_path: Path) -> None:
    variant = copy.deepcopy(base())
    _remove_response_property(variant)
    result = run_diff(write(tmp_path, "old", base()), write(tmp_path, "new", variant))
    (change,) = result.changes
    assert change.operations == (
        "GET /v1/customers",
        "GET /v1/customers/{customer}",
        "POST /v1/customers",
        "PUT /v1/customers/{customer}",
    )
    assert "client.customers.get() → Customer.name" in change.client
    assert change.old_pointer == "/components/schemas/Customer/properties/name"


def _described(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _described(v) for k, v in node.items()}
        if "description" in out and isinstance(out["description"], str):
            out["description"] += " Now better explained."
        return out
    if isinstance(node, list):
        return [_described(v) for v in node]
    return node


def _reordered(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _reordered(node[k]) for k in reversed(list(node))}
    if isinstance(node, list):
        return [_reordered(v) for v in node]
    return node


def _inlined(spec: Spec) -> Spec:
    """The Customer schema written inline where the 201 refers to it."""
    out = copy.deepcopy(spec)
    media = _create(out)["responses"]["201"]["content"]["application/json"]
    media["schema"] = copy.deepcopy(_customer(out))
    return out


@pytest.mark.parametrize(
    "variant,as_json",
    [
        (base, False),
        (lambda: _reordered(base()), True),
        (lambda: _described(base()), False),
        (lambda: _inlined(base()), False),
    ],
    ids=["identical", "reordered-json", "descriptions", "inlined"],
)
def test_no_breaking_change(variant: Callable[[], Spec], as_json: bool, tmp_path: Path) -> None:
    result = run_diff(str(BASE), write(tmp_path, "new", variant(), as_json))
    assert result.count("breaking") == 0, [c.message for c in result.changes]
    assert result.changes == ()
    assert result.bump == "patch"
