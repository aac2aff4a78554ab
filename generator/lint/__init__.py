"""`apiforge lint`: the rule engine, configuration and reporters. The rules themselves live
in the pattern modules (generator/patterns/*.py, each a `RULES` tuple)."""
