"""The `apiforge generate` pipeline: load → validate → models → plan → render → format →
write, with the stages that may run in a child process.

May import every other package of `generator`; nothing but `generator.cli`, `generator.demo`
and `generator.inspect` imports it.
"""
