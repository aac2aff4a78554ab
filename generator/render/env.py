"""The Jinja environment every generator renders with.

Templates live in the repository's `templates/` (a checkout or an editable install) or, in an
installed wheel, in `generator/templates/` (pyproject force-includes them there).
Undefined variables are errors (StrictUndefined), and spec values reach the output only through
the filters below, never raw: a template that writes `{{ op.description }}` without a filter is
a bug (the `raw` filter does not exist on purpose).

Filters:

- `ident`: any text → a safe identifier (as is, cleaned); `snake` / `pascal`: case-converted;
- `pystr`: a Python string literal; `pyliteral`: a literal for JSON-like data;
- `docstring(indent)`: text safe inside `\"\"\"…\"\"\"`; `comment`: `# ` lines; `one_line`: folded text;
- `toml`: a TOML basic string.
"""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from generator.render.escape import (
    comment,
    docstring_text,
    one_line,
    py_literal,
    py_string,
    toml_string,
)
from generator.render.names import pascal_case, safe_identifier, snake_case


def templates_root() -> Path:
    """The `templates/` directory: next to the package in a checkout, inside it in a wheel."""
    package = Path(__file__).resolve().parent.parent  # generator/
    for candidate in (package / "templates", package.parent / "templates"):
        if (candidate / "client").is_dir() or (candidate / "server").is_dir():
            return candidate
    raise FileNotFoundError(f"apiforge's templates are missing (looked in {package})")


@functools.lru_cache(maxsize=8)
def environment(subdir: str) -> jinja2.Environment:
    """The environment for `templates/<subdir>/` (e.g. "client", "server")."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_root() / subdir)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        ident=lambda v: safe_identifier(str(v)),
        snake=lambda v: snake_case(str(v)),
        pascal=lambda v: pascal_case(str(v)),
        pystr=py_string,
        pyliteral=py_literal,
        docstring=docstring_text,
        toml=toml_string,
        comment=comment,
        one_line=one_line,
    )
    return env


def render(subdir: str, template: str, **context: object) -> str:
    """Render `templates/<subdir>/<template>` with `context`."""
    return environment(subdir).get_template(template).render(**context)
