"""What lifting operations' inline object schemas costs the models step (docs/client.md).

    .venv/bin/python bench/inline_models_cost.py SPEC [components|inline]

Runs datamodel-code-generator once (`models._run`, no cache) on the schema subset
`models._job` builds for the spec: with `components`, the component schemas only (as
before inline models); with `inline`, those and the lifted ones (`model_schemas`). Prints
the CPU and wall seconds, the module's size and its classes. Run each in its own process,
one after the other, on the same machine.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str]) -> int:
    from generator.models import build as models
    from generator.models.class_names import model_class_names
    from generator.models.inline import model_schemas
    from generator.spec import load_spec

    spec, which = argv[0], argv[1] if len(argv) > 1 else "inline"
    loaded = load_spec(spec)
    api = loaded.api
    if which == "components":
        names = model_class_names(api.schemas)
    else:
        names = dict(model_schemas(api).class_names)
    job = models._job(loaded.resolver.root.data, names, "# header")
    assert job is not None, "the subset needs files the library reads itself"
    wall, cpu = time.perf_counter(), time.process_time()
    text = models._run(job.subset, job.options)
    print(
        f"{Path(spec).name} {which}: {len(names)} schemas, "
        f"cpu {time.process_time() - cpu:.1f} s, wall {time.perf_counter() - wall:.1f} s, "
        f"{len(text) / 1e6:.2f} MB, {text.count(chr(10) + 'class ')} classes"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
