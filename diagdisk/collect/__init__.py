"""Collect: a live host enters (its logs, /proc and /sys, command outputs, read-only and bounded by
timeouts); one sosreport-shaped bundle leaves, which the inputs stage reads like any sosreport.

runner (one timed command) -> items (what to collect, where it lands) -> bundle (run the plan,
write the .tar.gz and manifest.json); the command is diagdisk.cli.collect.
"""
