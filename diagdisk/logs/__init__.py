"""Logs: kernel-log sources enter (messages, journal, dmesg, kmsg, in any era's framing); events
leave, each one kernel message read by the grammars, stitched with its continuation lines, dated,
decoded and folded into records counted once across the host's logs."""
