"""What a change does to the generated client: the method, keyword argument or model field it
changes, spelled as the client spells them — by the client's own naming functions, imported
here and nowhere else in this package (when first needed: a diff without breaking changes
does not import the generators) — and the semantic-version bump the client package needs."""

from __future__ import annotations

from collections.abc import Iterable

from generator.diff.model import Change
from generator.ir import Api


class ClientNames:
    """The client's names on each side, made when first asked (only reports with breaking
    changes ask)."""

    def __init__(self, old: Api, new: Api) -> None:
        self._apis = {"old": old, "new": new}
        self._paths: dict[str, dict[str, str]] = {}
        self._models: dict[str, dict[str, str]] = {}

    def _path(self, side: str, op_id: str) -> str:
        if side not in self._paths:
            from generator.client.method_names import client_methods

            self._paths[side] = client_methods(self._apis[side]).paths()
        return self._paths[side].get(op_id, "client")

    def _model(self, side: str, name: str) -> str:
        if side not in self._models:
            from generator.models.class_names import model_class_names

            self._models[side] = model_class_names(self._apis[side].schemas)
        return self._models[side].get(name, name)

    def describe(self, change: Change) -> tuple[str, ...]:
        """Each place of the client the change reaches, e.g. `client.customers.create(
        address=…)` or `client.customers.retrieve() → Customer.address`."""
        from generator.render.names import snake_case

        if change.webhook:
            return (f"webhooks: verify_{snake_case(change.webhook)}()",)
        if not change.reach:  # the API's own: its servers
            return ("Client(base_url=…): the default server",)
        out: dict[str, None] = {}
        for old_op, new_op in change.reach:
            side, op = ("new", new_op) if new_op is not None else ("old", old_op)
            if op is None:
                continue
            method = self._path(side, op.id)
            field = ""
            if change.prop:
                owner = self._model(side, change.model) if change.model else "body"
                names = [snake_case(p, fallback="field") for p in change.prop.split(".") if p]
                field = ".".join((owner, *names))
            if change.argument:
                out[f"{method}({snake_case(change.argument, fallback='param')}=…)"] = None
            elif change.body:
                out[f"{method}(body=…)" + (f": {field}" if field else "")] = None
            elif field:
                out[f"{method}() → {field}"] = None
            else:
                out[f"{method}()"] = None
        return tuple(out)


def semver_bump(levels: Iterable[str]) -> str:
    """`major` when a change breaks clients, `minor` when the API changed otherwise, `patch`
    when nothing a client sees changed."""
    seen = set(levels)
    if "breaking" in seen:
        return "major"
    return "minor" if seen else "patch"
