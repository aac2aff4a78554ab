"""The client product: the plan of a generated httpx SDK and the plan's pieces.

- `plan`: `plan_client`/`write_client` — the planner; `plan_types`: what a plan is;
- `files`: the plan's file list — which files, each with its template and context;
- `auth`, `pages`, `media`, `servers`: the plan's pieces (credentials, pagination,
  request/response media types, server URLs);
- `method_names`: the resource methods and their names;
- `models`: the shared models module made forward-compatible for responses;
- `gaps`: what the client cannot express yet, warned at generation time.

May import: `generator.render`, `generator.models`, the IR, `generator.spec` and
`generator.patterns`. Never `generator.server`, `generator.lint` or the pipeline.
"""
