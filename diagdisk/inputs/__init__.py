"""Inputs: what the user named (a sosreport folder or archive, a collect bundle, log files, stdin)
enters; source files leave, each classified (kernel log, command table, smartctl) and read safely in
bounded chunks."""
