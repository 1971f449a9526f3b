"""Entry point for ``python -m wavegen``."""

from .adapters.cli import main

raise SystemExit(main())
