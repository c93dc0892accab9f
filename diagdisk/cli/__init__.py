"""The command line: `diagdisk analyze`, `events`, `decode`, `rules` and `collect`. It calls the
stages in order and owns what the user sees of a run: options, exit codes, one-line errors."""
