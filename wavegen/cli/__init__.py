"""The command line: one module per command; parses flags, picks output formats, maps outcomes to exit codes."""
