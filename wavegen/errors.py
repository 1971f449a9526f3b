"""The one fatal error type and the documented exit codes."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class WavegenError(Exception):
    """A problem with the input or environment, reported as one line, never a traceback.

    Messages must never contain Secret values: only names, key names and positions.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str = "",
        document: int = 0,
        line: int = 0,
        exit_code: int = EXIT_FINDINGS,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.document = document
        self.line = line
        self.exit_code = exit_code

    def located(self, *, file: str = "", document: int = 0, line_offset: int = 0) -> WavegenError:
        """Return a copy with position details filled in where they were unknown."""
        return WavegenError(
            self.message,
            file=self.file or file,
            document=self.document or document,
            line=self.line + line_offset if self.line else 0,
            exit_code=self.exit_code,
        )

    def __str__(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.document:
            where.append(f"document {self.document}")
        if self.line:
            where.append(f"line {self.line}")
        prefix = ", ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message


class UsageError(WavegenError):
    """Bad flags or configuration: exit code 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=EXIT_USAGE)
