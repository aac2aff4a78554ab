"""The `apiforge generate` pipeline: load → validate → models → plan → render → format →
write.

- `generate`: `generate()`, each stage a named function;
- `trees`: the server's and the client's trees planned and rendered in this process;
- `concurrency`: which stage runs in a forked child, what is planned before the models module
  is there, and how a child's warnings are replayed (its docstring draws the timeline);
- `progress`: the stages and counts a long run shows on a terminal.

May import every other package of `generator`; only `generator.cli` imports it.
"""
