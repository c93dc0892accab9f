"""smartctl's exit status: a bit mask, one meaning per bit (smartctl(8), RETURN VALUES)."""

from __future__ import annotations

SMARTCTL_EXIT_BITS = (
    "command_line_error",
    "device_open_failed",
    "smart_command_failed",
    "disk_failing",
    "prefail_below_threshold",
    "usage_below_threshold_in_past",
    "error_log_has_errors",
    "self_test_log_has_errors",
)


def decode_smartctl_exit_status(status: int | None) -> list[str]:
    """Names of the bits set in a smartctl exit status; [] for 0 or None."""
    if not status:
        return []
    return [name for bit, name in enumerate(SMARTCTL_EXIT_BITS) if status & (1 << bit)]
