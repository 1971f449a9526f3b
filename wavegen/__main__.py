"""Entry point for ``python -m wavegen``."""

from .cli.main import main

raise SystemExit(main())
