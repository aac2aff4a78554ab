"""The server product: the plan of a generated FastAPI server and the plan's pieces.

- `plan`: `plan_server`/`write_server` — which files, with which context;
- `security`, `events`, `conformance`, `nulls`, `params`, `settings`: the plan's pieces
  (auth schemes, webhook events, response conformance and mocks, null rules, parameter
  constraints, extra settings);
- `handlers`: the hand-written handler modules (created once, never overwritten) and the
  operations they still lack;
- `error_views` and `mock_values`: the problem+json views and the mock answers.

May import: `generator.render`, `generator.models`, the IR, `generator.spec` and
`generator.patterns`. Never `generator.client`, `generator.lint` or the pipeline.
"""
