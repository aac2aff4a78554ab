"""An example apiforge lint plugin: a team's own rule, run by `apiforge lint` beside
apiforge's.

A rule is a function from the typed API (`generator.ir.Api`) to hits, turned into a `Rule`
by the `rule` decorator (id, default severity, one-line summary, the pattern it belongs to).
The entry point (group `apiforge.rules`, see pyproject.toml) names `RULES`. Configuration,
`x-apiforge-ignore`, baselines and every output format treat the plugin's findings as
apiforge's own.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.ir import Api
from generator.lint.model import Hit, op_hit, rule


@rule(
    "operation-summary-missing",
    "warning",
    "an operation without a `summary` (documentation tools show it as the operation's title)",
    "docs",
)
def summary_missing(api: Api) -> Iterator[Hit]:
    for op in api.operations:
        if not op.summary.strip():
            yield op_hit(op, "add a `summary`: documentation shows it as the title")


RULES = (summary_missing,)
