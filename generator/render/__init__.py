"""Rendering: the shared core every generator (client, server) uses.

- `env`: the Jinja environment (StrictUndefined, escaping filters) and `templates_root()`;
- `names`: spec names → safe identifiers (`snake_case`, `pascal_case`, `safe_identifier`,
  `NameAllocator` for stable collision resolution);
- `escape`: spec text → string literals, docstrings, comments (`py_string`, `py_literal`,
  `docstring_text`, `comment`, `one_line`, `toml_string`);
- `pytypes`: schemas → Python type expressions (`TypeMapper`);
- `models`: component schemas → Pydantic v2 models (`generate_models`, `model_class_names`);
- `writer`: all-or-nothing output with ruff formatting (`GeneratedFile`, `write_tree`,
  `marker_line`);
- `client` (and `server`): the plans — which files, with which context.
"""
