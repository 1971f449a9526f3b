"""The one fatal error type and the documented exit codes."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3  # a bug: one line on stderr, never a traceback


def location_text(file: str, document: int, line: int, template: str = "") -> str:
    """Where something is, for a message: ``file, document 2, line 9``.

    A document that carries helm's ``# Source:`` comment is named by that
    template first, since the rendered stream is not a file the user edits:
    ``chart/templates/deployment.yaml (rendered document 3, line 99)``.
    """
    if not template:
        return ", ".join(
            part for part in (file, f"document {document}" if document else "", f"line {line}" if line else "") if part
        )
    # "<stdin>" and "<helm>" name no file the user could open; leave them out.
    shown_file = "" if file.startswith("<") else file
    rendered = f"rendered document {document}" if document else "rendered"
    inner = ", ".join(part for part in (shown_file, rendered, f"line {line}" if line else "") if part)
    return f"{template} ({inner})"


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
        template: str = "",
        exit_code: int = EXIT_FINDINGS,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.document = document
        self.line = line
        self.template = template  # helm's "# Source:" template of the document, if it names one
        self.exit_code = exit_code

    def located(self, *, file: str = "", document: int = 0, line_offset: int = 0, template: str = "") -> WavegenError:
        """Return a copy with position details filled in where they were unknown."""
        return WavegenError(
            self.message,
            file=self.file or file,
            document=self.document or document,
            line=self.line + line_offset if self.line else 0,
            template=self.template or template,
            exit_code=self.exit_code,
        )

    def __str__(self) -> str:
        prefix = location_text(self.file, self.document, self.line, self.template)
        return f"{prefix}: {self.message}" if prefix else self.message


class UsageError(WavegenError):
    """Bad flags or configuration: exit code 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=EXIT_USAGE)
