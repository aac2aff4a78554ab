"""apiforge: production patterns from an OpenAPI description — lint, server, client."""

__version__ = "0.1.0"
