"""Rendering: the shared machinery every product (server, client, models) writes with.

- `env`: the Jinja environment (StrictUndefined, escaping filters), its render caches and
  `templates_root()`;
- `names`: spec names → safe identifiers (`snake_case`, `pascal_case`, `safe_identifier`,
  `NameAllocator` for stable collision resolution);
- `escape`: spec text → string literals, docstrings, comments (`py_string`, `py_literal`,
  `docstring_text`, `comment`, `one_line`, `toml_string`);
- `pytypes`: schemas → Python type expressions (`TypeMapper`);
- `resources`: operations grouped into resources (shared by the server's routers and the
  client's resource classes);
- `plan_cache`: per-resource plans kept between runs;
- `writer` and `written`: all-or-nothing output with ruff formatting (`GeneratedFile`,
  `write_tree`, `marker_line`) and the index of what the last run wrote.

May import: the IR, `generator.spec` and `generator.errors`/`log`. Never a product package
(`generator.server`, `generator.client`, `generator.models`) or the pipeline.
"""
