"""`apiforge diff OLD NEW`: what changed between two versions of a spec, and what it does to
the clients that use it.

This package owns the comparison and its report: the change kinds and their classification
(`kinds`), comparing two patterned IRs (`compare`, with schemas in `schemas` and the
production patterns in `patterns`), what a change does to the generated client and the
semantic-version bump (`client_effect`), configuration and acknowledgements, locating each
change in both files, and the reporters (`report`).

It imports the spec loader (`generator.spec`), the IR (`generator.ir`), pattern detection
(`generator.patterns`), lint's configuration reader (`generator.lint.config`) and, in
`client_effect` only, the client's naming functions — nothing imports it but the CLI.
"""
