"""The command line: one module per command; parses flags, picks output formats, maps outcomes to exit codes."""

#: The environment variable click's shell completion sets; such runs always go through typer (here, where
#: both the entry point and the app find it without importing more).
COMPLETE_VAR = "_WAVEGEN_COMPLETE"
