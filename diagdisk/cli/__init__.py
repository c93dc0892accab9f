"""Command line: the user's words enter (`diagdisk analyze`, `events`, `decode`, `rules`,
`collect`); a report on stdout, one-line errors on stderr and a documented exit code leave. It calls
the stages in order and owns what the user sees of a run."""
