"""The models step: component (and inline) schemas → one Pydantic v2 `models.py`, shared by
the server and the client.

- `build`: the run of datamodel-code-generator, cached by content (`models_for`,
  `generate_models`);
- `class_names`: the class name of each component schema (`model_class_names`);
- `inline`: schemas declared inline in operations, given names beside the components;
- `subset`: the part of the document the library receives, with descriptions replaced by
  placeholders;
- `format_checks`: which string formats the models check (`x-apiforge-format-checks`), and
  the server's `EmailStr` from its runtime;
- `fixes`, `isolation`, `constraints`, `regex_engines`: what is mended, left out or dropped
  so that the module imports and validates as the spec says.

May import: `generator.render`, the IR, `generator.spec`. Never a product package
(`generator.server`, `generator.client`), `generator.lint` or the pipeline.
"""
