"""apiforge: production patterns from an OpenAPI description — lint, server, client."""

import atexit

from generator import compiled_methods

__version__ = "0.1.0"

compiled_methods.install()  # before any of apiforge's dataclasses is made
atexit.register(compiled_methods.save)
