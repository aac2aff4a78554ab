"""Client method names on path-derived resources: what an operation does to its resource
(`client.customers.sources.list`), collisions falling back to the operationId's name, the
`x-apiforge-method-name` extension; the generated client used through them against a real
server, checked by `mypy --strict`; Stripe's names."""

from __future__ import annotations

import ast
import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.client.gaps import client_gaps
from generator.client.method_names import class_scope_safe, client_methods
from generator.client.plan import write_client
from generator.spec import load_spec
from tests.client.conftest import Generated, generate
from tests.conftest import CORPUS
from tests.runtime.client.fakes import Reply, ScriptServer, serving

_OK = "responses: {'200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/Thing'}}}}}"
_MANY = "responses: {'200': {description: ok, content: {application/json: {schema: {type: array, items: {$ref: '#/components/schemas/Thing'}}}}}}"
_ENVELOPE = "responses: {'200': {description: ok, content: {application/json: {schema: {type: object, properties: {data: {type: array, items: {type: string}}, has_more: {type: boolean}}}}}}}"
_DONE = "responses: {'204': {description: ok}}"


def _param(name: str) -> str:
    return f"[{{name: {name}, in: path, required: true, schema: {{type: string}}}}]"


TABLE = f"""
openapi: 3.1.0
info: {{title: Shop, version: 1.0.0}}
paths:
  /v1/customers:
    get: {{operationId: GetCustomers, {_MANY}}}
    post: {{operationId: PostCustomers, {_OK}}}
  /v1/customers/{{customer}}:
    parameters: {_param("customer")}
    get: {{operationId: GetCustomersCustomer, {_OK}}}
    post: {{operationId: PostCustomersCustomer, {_OK}}}
    delete: {{operationId: DeleteCustomersCustomer, {_DONE}}}
  /v1/customers/{{customer}}/sources:
    parameters: {_param("customer")}
    get: {{operationId: GetCustomersCustomerSources, {_ENVELOPE}}}
    post: {{operationId: PostCustomersCustomerSources, {_OK}}}
  /v1/customers/{{customer}}/sources/{{id}}:
    parameters: [{{name: customer, in: path, required: true, schema: {{type: string}}}}, {{name: id, in: path, required: true, schema: {{type: string}}}}]
    get: {{operationId: GetCustomersCustomerSourcesId, {_OK}}}
    post: {{operationId: PostCustomersCustomerSourcesId, {_OK}}}
    delete: {{operationId: DeleteCustomersCustomerSourcesId, {_DONE}}}
  /v1/customers/{{customer}}/sources/{{id}}/verify:
    parameters: [{{name: customer, in: path, required: true, schema: {{type: string}}}}, {{name: id, in: path, required: true, schema: {{type: string}}}}]
    post: {{operationId: PostCustomersCustomerSourcesIdVerify, {_OK}}}
  /v1/charges/{{charge}}/capture:
    post: {{operationId: PostChargesChargeCapture, parameters: {_param("charge")}, {_OK}}}
  /v1/charges/{{charge}}/markAsFraud:
    post: {{operationId: PostChargesChargeMarkAsFraud, parameters: {_param("charge")}, {_OK}}}
  /v1/exports:
    get: {{operationId: GetExports, {_OK}}}
    post: {{operationId: PostExports, responses: {{'201': {{description: created}}}}}}
  /v1/distributions:
    get: {{operationId: GetDistributions, {_OK}}}
  /v1/distributions/{{distribution}}/links:
    get: {{operationId: GetDistributionLinks, parameters: {_param("distribution")}, {_OK}}}
  /sendMessage:
    post: {{operationId: post_sendMessage, {_OK}}}
  /v1/specs/{{spec}}:rollback:
    post: {{operationId: RollbackSpec, parameters: {_param("spec")}, {_OK}}}
  /v1/account:
    get: {{operationId: GetAccount, {_OK}}}
    post: {{operationId: PostAccount, {_OK}}}
    delete: {{operationId: DeleteAccount, {_DONE}}}
    head: {{operationId: HeadAccount, {_DONE}}}
  /v1/transfers/{{transfer}}/return:
    post: {{operationId: PostTransfersTransferReturn, parameters: {_param("transfer")}, {_OK}}}
  /v1/transfers/{{transfer}}/with_raw_response:
    post: {{operationId: PostTransfersRaw, parameters: {_param("transfer")}, {_OK}}}
  /v1/pets:
    get: {{operationId: listPetsV1, {_MANY}}}
  /v2/pets:
    get: {{operationId: listPetsV2, {_MANY}}}
  /v1/pets/{{pet}}:
    parameters: {_param("pet")}
    put: {{operationId: replacePet, {_OK}}}
    patch: {{operationId: patchPet, {_OK}}}
  /v1/invoices/{{invoice}}/search:
    post: {{operationId: PostInvoicesInvoiceSearch, parameters: {_param("invoice")}, {_OK}}}
  /v1/invoices/search:
    get: {{operationId: GetInvoicesSearch, {_ENVELOPE}}}
  /v1/invoices/{{invoice}}:
    get: {{operationId: GetInvoice, parameters: {_param("invoice")}, {_OK}}}
  /v1/invoices/{{invoice}}/lines:
    post: {{operationId: PostInvoicesInvoiceLines, parameters: {_param("invoice")}, {_OK}}}
  /v1/invoices/lines:
    get: {{operationId: GetInvoicesLines, {_ENVELOPE}}}
    post: {{operationId: PostInvoicesLines, {_OK}}}
  /v1/orders:
    get: {{operationId: GetOrders, x-apiforge-method-name: list, {_MANY}}}
    post: {{operationId: PostOrders, x-apiforge-method-name: place, {_OK}}}
  /v1/orders/{{order}}:
    parameters: {_param("order")}
    get: {{operationId: GetOrder, x-apiforge-method-name: not valid, {_OK}}}
    post: {{operationId: PostOrder, x-apiforge-method-name: class, {_OK}}}
    delete: {{operationId: DeleteOrder, x-apiforge-method-name: place, {_DONE}}}
  /v1/orders/{{order}}/list:
    post: {{operationId: PostOrderList, parameters: {_param("order")}, {_OK}}}
  /v1/reports:
    get: {{operationId: listReports, tags: [Reports], {_MANY}}}
    post: {{operationId: runReport, tags: [Reports], x-apiforge-method-name: run, {_OK}}}
components:
  schemas:
    Thing: {{type: object, properties: {{id: {{type: string}}}}}}
"""


def _load(text: str, tmp_path: Path, name: str = "s.yaml") -> Any:
    spec = tmp_path / name
    spec.write_text(text)
    return load_spec(str(spec)).api


def _names(text: str, tmp_path: Path) -> dict[str, str]:
    return client_methods(_load(text, tmp_path)).paths()


def test_operations_are_named_by_what_they_do_to_their_resource(tmp_path: Path) -> None:
    names = _names(TABLE, tmp_path)
    assert names == {
        # a collection: it lists (an array, or an envelope of `data`) and creates
        "GetCustomers": "client.customers.list",
        "PostCustomers": "client.customers.create",
        # an item: the path ends in a parameter
        "GetCustomersCustomer": "client.customers.retrieve",
        "PostCustomersCustomer": "client.customers.update",
        "DeleteCustomersCustomer": "client.customers.delete",
        "GetCustomersCustomerSources": "client.customers.sources.list",
        "PostCustomersCustomerSources": "client.customers.sources.create",
        "GetCustomersCustomerSourcesId": "client.customers.sources.retrieve",
        "PostCustomersCustomerSourcesId": "client.customers.sources.update",
        "DeleteCustomersCustomerSourcesId": "client.customers.sources.delete",
        # an action on the resource it follows: the action's name, snake_case
        "PostCustomersCustomerSourcesIdVerify": "client.customers.sources.verify",
        "PostChargesChargeCapture": "client.charges.capture",
        "PostChargesChargeMarkAsFraud": "client.charges.mark_as_fraud",
        # a POST answering 201 Created makes a collection, whatever its GET answers
        "GetExports": "client.exports.list",
        "PostExports": "client.exports.create",
        # so does another path going on from it with a parameter
        "GetDistributions": "client.distributions.list",
        "GetDistributionLinks": "client.distributions.links.retrieve",
        # a call (RPC style, a custom method): named by it
        "post_sendMessage": "client.send_message.send_message",
        "RollbackSpec": "client.specs.spec_rollback.rollback",
        # a singleton: one thing, no parameter
        "GetAccount": "client.account.retrieve",
        "PostAccount": "client.account.update",
        "DeleteAccount": "client.account.delete",
        # HEAD has no such name: its operationId's, without the resource's own name
        "HeadAccount": "client.account.head",
        # a keyword, a name every resource class has: the operationId's name
        "PostTransfersTransferReturn": "client.transfers.post_transfers_transfer_return",
        "PostTransfersRaw": "client.transfers.post_transfers_raw",
        # two operations wanting `list` (v1 and v2 share a resource), PUT and PATCH both
        # wanting `update`: every one of them falls back
        "listPetsV1": "client.pets.list_pets_v_1",
        "listPetsV2": "client.pets.list_pets_v_2",
        "replacePet": "client.pets.replace_pet",
        "patchPet": "client.pets.patch_pet",
        # `search` on the collection (one GET after its path: an action, as
        # `client.customers.search(...)`) and on an item: both actions want it, both fall back
        "PostInvoicesInvoiceSearch": "client.invoices.post_invoices_invoice_search",
        "GetInvoicesSearch": "client.invoices.get_invoices_search",
        # `lines` is a nested resource of `invoices` (two operations): the action does not
        # shadow it
        "PostInvoicesInvoiceLines": "client.invoices.post_invoices_invoice_lines",
        "GetInvoicesLines": "client.invoices.lines.list",
        "PostInvoicesLines": "client.invoices.lines.create",
        "GetInvoice": "client.invoices.retrieve",
        # the extension: stated names win over derived ones (`list` action on /orders/{order}
        # yields), a stated name two operations share or that is no identifier is ignored
        "GetOrders": "client.orders.list",
        "PostOrders": "client.orders.post_orders",
        "DeleteOrder": "client.orders.delete_order",
        "GetOrder": "client.orders.retrieve",
        "PostOrder": "client.orders.update",
        "PostOrderList": "client.orders.post_order_list",
        # tagged: the operationId's name without the resource's own name, unless the
        # extension says otherwise
        "listReports": "client.reports.list",
        "runReport": "client.reports.run",
    }


def test_unusable_or_colliding_extensions_are_located_warnings(tmp_path: Path) -> None:
    api = _load(TABLE, tmp_path)
    gaps = [g for g in client_gaps(api) if "x-apiforge-method-name" in g.what]
    found = {(g.subject, g.where.pointer.rsplit("/", 1)[-1]): g.what for g in gaps}
    assert set(found) == {
        ("POST /v1/orders", "x-apiforge-method-name"),
        ("DELETE /v1/orders/{order}", "x-apiforge-method-name"),
        ("GET /v1/orders/{order}", "x-apiforge-method-name"),
        ("POST /v1/orders/{order}", "x-apiforge-method-name"),
    }
    assert (
        "'not valid' is not a usable method name"
        in found[("GET /v1/orders/{order}", "x-apiforge-method-name")]
    )
    assert (
        "'class' is not a usable method name"
        in found[("POST /v1/orders/{order}", "x-apiforge-method-name")]
    )
    assert "the method is `post_orders`" in found[("POST /v1/orders", "x-apiforge-method-name")]
    assert all(g.where.pointer.startswith("/paths/~1v1~1orders") for g in gaps)


ADDED_ELSEWHERE = f"""
  /v1/refunds:
    get: {{operationId: GetRefunds, {_MANY}}}
  /v1/customers/{{customer}}/sources/{{id}}/cancel:
    parameters: [{{name: customer, in: path, required: true, schema: {{type: string}}}}, {{name: id, in: path, required: true, schema: {{type: string}}}}]
    post: {{operationId: PostSourceCancel, {_OK}}}
  /v1/reports/{{report}}:
    get: {{operationId: getReport, tags: [Reports], parameters: {_param("report")}, {_OK}}}
components:"""


def test_names_stay_put_when_operations_are_added(tmp_path: Path) -> None:
    before = _names(TABLE, tmp_path)
    after = _names(TABLE.replace("\ncomponents:", ADDED_ELSEWHERE, 1), tmp_path)
    # another resource, the same resource under another name, a tagged one: nothing moves
    assert {k: after[k] for k in before} == before
    assert after["GetRefunds"] == "client.refunds.list"
    assert after["PostSourceCancel"] == "client.customers.sources.cancel"
    # one more operation wanting a taken name: only the two that want it change, and to their
    # operationId's names, not to numbered ones
    colliding = f"""
  /v3/customers:
    get: {{operationId: GetCustomersV3, {_MANY}}}
components:"""
    third = _names(TABLE.replace("\ncomponents:", colliding, 1), tmp_path)
    changed = {k: third[k] for k in before if third[k] != before[k]}
    assert changed == {"GetCustomers": "client.customers.get_customers"}
    assert third["GetCustomersV3"] == "client.customers.get_customers_v_3"


def test_builtins_in_annotations_are_spelled_out_beside_a_list_method() -> None:
    shadowed = frozenset({"list"})
    assert class_scope_safe("list[str] | None", shadowed) == "builtins.list[str] | None"
    assert (
        class_scope_safe('dict[str, list[models.Thing]] | Literal["list[x]", "list"]', shadowed)
        == 'dict[str, builtins.list[models.Thing]] | Literal["list[x]", "list"]'
    )
    assert class_scope_safe("models.list", shadowed) == "models.list"
    assert class_scope_safe("list[str]", frozenset()) == "list[str]"


# --- a generated client, used through its names ----------------------------------------------

SHOP = f"""
openapi: 3.1.0
info: {{title: Names Shop, version: 1.0.0}}
servers: [{{url: 'http://127.0.0.1'}}]
paths:
  /v1/customers:
    get:
      operationId: GetCustomers
      parameters: [{{name: expand, in: query, schema: {{type: array, items: {{type: string}}}}}}]
      {_MANY}
    post:
      operationId: PostCustomers
      requestBody: {{required: true, content: {{application/json: {{schema: {{$ref: '#/components/schemas/Thing'}}}}}}}}
      {_OK}
  /v1/customers/{{customer}}:
    parameters: {_param("customer")}
    get:
      operationId: GetCustomersCustomer
      parameters: [{{name: expand, in: query, schema: {{type: array, items: {{type: string}}}}}}]
      {_OK}
    delete: {{operationId: DeleteCustomersCustomer, {_DONE}}}
  /v1/customers/{{customer}}/sources/{{id}}/verify:
    parameters: [{{name: customer, in: path, required: true, schema: {{type: string}}}}, {{name: id, in: path, required: true, schema: {{type: string}}}}]
    post:
      operationId: PostCustomersCustomerSourcesIdVerify
      requestBody: {{content: {{application/json: {{schema: {{type: object, properties: {{amounts: {{type: array, items: {{type: integer}}}}}}}}}}}}}}
      {_OK}
  /v1/exports:
    get: {{operationId: GetExports, {_OK}}}
    post: {{operationId: PostExports, responses: {{'201': {{description: created}}}}}}
  /v1/distributions:
    get: {{operationId: GetDistributions, {_OK}}}
  /v1/distributions/{{distribution}}/links:
    get: {{operationId: GetDistributionLinks, parameters: {_param("distribution")}, {_OK}}}
  /sendMessage:
    post: {{operationId: post_sendMessage, {_OK}}}
  /v1/specs/{{spec}}:rollback:
    post: {{operationId: RollbackSpec, parameters: {_param("spec")}, {_OK}}}
  /v1/account:
    get: {{operationId: GetAccount, {_OK}}}
    post: {{operationId: PostAccount, x-apiforge-method-name: modify, {_OK}}}
components:
  schemas:
    Thing: {{type: object, properties: {{id: {{type: string}}}}}}
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Generated, Any]]:
    base = tmp_path_factory.mktemp("names_shop")
    spec = base / "names_shop.yaml"
    spec.write_text(SHOP)
    generated = generate(spec, base / "out")
    sys.path.insert(0, str(generated.out))
    try:
        yield generated, __import__(generated.package)
    finally:
        sys.path.remove(str(generated.out))


def _script() -> ScriptServer:
    script = ScriptServer()
    script.on("GET", "/v1/customers", Reply(200, json=[{"id": "c1"}]))
    script.on("POST", "/v1/customers", Reply(200, json={"id": "c2"}))
    script.on("GET", "/v1/customers/c1", Reply(200, json={"id": "c1"}))
    script.on("DELETE", "/v1/customers/c1", Reply(204))
    script.on("POST", "/v1/customers/c1/sources/s1/verify", Reply(200, json={"id": "s1"}))
    script.on("GET", "/v1/account", Reply(200, json={"id": "acct"}))
    script.on("POST", "/v1/account", Reply(200, json={"id": "acct"}))
    return script


def test_the_new_names_call_the_server_sync_and_async(shop: tuple[Generated, Any]) -> None:
    _, module = shop
    script = _script()
    with serving(script) as server:
        with module.Client(base_url=server.url) as client:
            got = [
                [c.id for c in client.customers.list(expand=["a", "b"])],
                client.customers.create(body={"id": "c2"}).id,
                client.customers.retrieve(customer="c1").id,
                client.customers.delete(customer="c1"),
                client.customers.sources.verify(customer="c1", id_="s1", body={"amounts": [1]}).id,
                client.account.retrieve().id,
                client.account.with_raw_response.modify().parsed.id,
            ]

        async def run() -> list[Any]:
            async with module.AsyncClient(base_url=server.url) as client:
                return [
                    [c.id for c in await client.customers.list(expand=["a", "b"])],
                    (await client.customers.create(body={"id": "c2"})).id,
                    (await client.customers.retrieve(customer="c1")).id,
                    await client.customers.delete(customer="c1"),
                    (await client.customers.sources.verify(customer="c1", id_="s1")).id,
                    (await client.account.retrieve()).id,
                    (await client.account.with_raw_response.modify()).parsed.id,
                ]

        assert asyncio.run(run()) == got == [["c1"], "c2", "c1", None, "s1", "acct", "acct"]
    assert [f"{r.method} {r.path}" for r in script.requests] == 2 * [
        "GET /v1/customers?expand=a&expand=b",
        "POST /v1/customers",
        "GET /v1/customers/c1",
        "DELETE /v1/customers/c1",
        "POST /v1/customers/c1/sources/s1/verify",
        "GET /v1/account",
        "POST /v1/account",
    ]


def test_readme_and_docstrings_use_the_new_names(shop: tuple[Generated, Any]) -> None:
    generated, module = shop
    readme = (generated.out / "README.md").read_text()
    assert "client.customers.list(" in readme and "client.account.modify(" in readme
    assert "get_customers" not in readme
    # the docstring says which operation a derived name stands for
    doc = module.resources.customers.CustomersResource.list.__doc__
    assert "`GET /v1/customers` (operationId `GetCustomers`)" in doc
    modify = module.resources.account.AsyncAccountResource.modify.__doc__
    assert "(operationId `PostAccount`)" in modify


USE = """
from {package} import AsyncClient, Client, models


def sync(client: Client) -> None:
    customers: list[models.Thing] = client.customers.list(expand=["a"])
    one: models.Thing = client.customers.retrieve(customer="c", expand=["x"])
    client.customers.sources.verify(customer="c", id_="s", body={{"amounts": [1]}})
    print(customers, one, client.account.modify().id)
    client.customers.get_customers()  # ERROR: the old name is gone


async def asynchronous(client: AsyncClient) -> None:
    reveal_type(await client.customers.list())
"""


def test_the_generated_client_passes_mypy_strict(
    shop: tuple[Generated, Any], tmp_path: Path
) -> None:
    generated, _ = shop
    (tmp_path / "use.py").write_text(USE.format(package=generated.package))
    checked = subprocess.run(
        # use.py and the package it imports from MYPYPATH: every resource module
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "use.py"],
        cwd=tmp_path,
        env={"MYPYPATH": str(generated.out), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in checked.stdout.splitlines() if ": " in line]
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 1 and 'has no attribute "get_customers"' in errors[0], checked
    assert f'Revealed type is "list[{generated.package}.models.thing.Thing]"' in checked.stdout
    source = (generated.out / generated.package / "resources" / "customers.py").read_text()
    assert "import builtins" in source and "expand: builtins.list[str] | None" in source


# --- Stripe ----------------------------------------------------------------------------------

STRIPE = CORPUS / "stripe" / "spec3.2023-09-12.yaml"


@pytest.mark.skipif(not STRIPE.exists(), reason="../shared/corpus is beside the clone")
def test_stripe_gets_stainless_style_names(tmp_path: Path) -> None:
    loaded = load_spec(str(STRIPE))
    plan, _ = write_client(
        loaded.api,
        tmp_path,
        spec_source=loaded.source,
        spec_name=STRIPE.name,
        package="stripe_client",
    )
    methods = {f"client.{r.dotted}.{o.name}": o.op.id for r in plan.resources for o in r.operations}
    for path, op_id in {
        "client.customers.list": "GetCustomers",
        "client.customers.create": "PostCustomers",
        "client.customers.retrieve": "GetCustomersCustomer",
        "client.customers.update": "PostCustomersCustomer",
        "client.customers.delete": "DeleteCustomersCustomer",
        "client.customers.sources.list": "GetCustomersCustomerSources",
        "client.customers.sources.create": "PostCustomersCustomerSources",
        "client.customers.sources.verify": "PostCustomersCustomerSourcesIdVerify",
        "client.charges.capture": "PostChargesChargeCapture",
        "client.account.retrieve": "GetAccount",
        "client.balance.retrieve": "GetBalance",
        "client.balance.history.list": "GetBalanceHistory",
        "client.payment_intents.confirm": "PostPaymentIntentsIntentConfirm",
        "client.checkout.sessions.expire": "PostCheckoutSessionsSessionExpire",
        # one operation after a collection's path: an action on it
        "client.customers.search": "GetCustomersSearch",
        "client.apps.secrets.delete": "PostAppsSecretsDelete",
        "client.tax.transactions.create_reversal": "PostTaxTransactionsCreateReversal",
        "client.charges.dispute.close": "PostChargesChargeDisputeClose",
    }.items():
        assert methods.get(path) == op_id, path
    # every operation has a method, and no two of one resource share a name
    assert len(methods) == len(loaded.api.operations) == 468
    for resource in plan.resources:
        names = [o.name for o in resource.operations]
        assert len(names) == len(set(names)), resource.dotted
    # the written module says the same
    sources = (tmp_path / "stripe_client" / "resources" / "customers_sources.py").read_text()
    for name in ("list", "create", "retrieve", "update", "delete", "verify"):
        assert _implementations(sources, name) == 2, name  # sync and async
    fell_back = [m for m in client_methods(loaded.api).names.values() if m.source == "operation_id"]
    assert len(fell_back) == 3  # the three `.../{id}/return` actions: `return` is a keyword


def test_inspect_shows_each_client_method_and_the_unusable_extensions(tmp_path: Path) -> None:
    spec = tmp_path / "table.yaml"
    spec.write_text(TABLE)
    proc = subprocess.run(
        [sys.executable, "-m", "generator.cli", "inspect", str(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "CLIENT METHOD" in lines[2]
    row = next(line for line in lines if line.startswith("GET /v1/customers/{customer}/sources "))
    assert "client.customers.sources.list " in row
    # the table's list of what the client cannot express locates each extension it ignores
    located = [line for line in lines if "x-apiforge-method-name" in line]
    assert len(located) == 4 and all(line.strip().startswith(f"{spec}:") for line in located)
    as_json = subprocess.run(
        [sys.executable, "-m", "generator.cli", "inspect", str(spec), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    operations = {o["id"]: o for o in json.loads(as_json.stdout)["operations"]}
    assert operations["PostChargesChargeCapture"]["client"] == "client.charges.capture"


def test_a_name_repeating_its_resource_drops_it_unless_that_collides(tmp_path: Path) -> None:
    spec = """openapi: 3.1.0
info: {title: Trim, version: 1.0.0}
paths:
  /repos/{owner}/{repo}/issues:
    get: {operationId: issues/list-for-repo, tags: [issues], responses: {'200': {description: ok}}}
    post: {operationId: issues/create, tags: [issues], responses: {'201': {description: ok}}}
  /issues:
    get: {operationId: issues/list, tags: [issues], responses: {'200': {description: ok}}}
  /user/issues:
    get: {operationId: listIssues, tags: [issues], responses: {'200': {description: ok}}}
  /payments:
    post: {operationId: createPayment, tags: [payments], responses: {'201': {description: ok}}}
  /repos/{owner}/{repo}:
    get: {operationId: repos/get, tags: [repos], responses: {'200': {description: ok}}}
"""
    names = _names(spec, tmp_path)
    assert names == {
        "issues/list-for-repo": "client.issues.list_for_repo",
        "issues/create": "client.issues.create",
        # `issues/list` and `listIssues` both want `list`: both keep their operationId's name
        "issues/list": "client.issues.issues_list",
        "listIssues": "client.issues.list_issues",
        "createPayment": "client.payments.create",
        "repos/get": "client.repos.get",
    }


def _implementations(source: str, name: str) -> int:
    """How many methods called `name` the module defines, its `@overload` signatures left out."""
    return sum(
        1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name == name
        and not any(isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list)
    )
