"""(being written) — see ops/__init__.py."""

BUILDERS: tuple[str, ...] = ()
__all__: list[str] = []
