"""setuptools' build (pyproject.toml) and one step more: the transform path compiled into one file (wavegen/cli/preload.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithPreload(build_py):
    """Copies the package, then writes the preload file for the building interpreter beside it."""

    def run(self) -> None:
        super().run()
        if self.dry_run or getattr(self, "editable_mode", False):
            return  # an editable install runs the source tree, whose files change under it
        build_lib = str(Path(self.build_lib).resolve())
        sys.path.insert(0, build_lib)
        try:
            from wavegen.cli import preload
        finally:
            sys.path.remove(build_lib)
        preload.write(Path(build_lib))


setup(cmdclass={"build_py": BuildWithPreload})
