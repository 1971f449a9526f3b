"""Where bundles and options come from: files, directories, stdin, flags and config files."""
