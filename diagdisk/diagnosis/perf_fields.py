"""The figures a performance rule may name (diagdisk.diagnosis.perf derives them), apart from
the code that derives them: loading the rules checks their names without importing pandas."""

from __future__ import annotations

from ..performance.series import FIELDS

SERIES_FIELDS = [f for f in FIELDS]
_DERIVED = ["device", "class", "parallel", "baseline_ms", "await_x_baseline", "await_x_svctm", "queue_wait_ms",
            "await_rise", "svctm_apparent", "r_share", "group_kind", "peers", "peers_await_median",
            "peers_svctm_median", "peers_iops_median", "peers_util_max", "peer_await_ratio", "peer_svctm_ratio",
            "peer_iops_ratio", "members", "members_await_max", "members_util_max", "await_x_members",
            "max_sectors_kb", "max_hw_sectors_kb", "read_ahead_kb", "scheduler", "md_level", "stripe_kb",
            "areq_x_max_sectors", "samples", "util_inflated", "aqu_little", "little_ratio", "little_consistent",
            "queue", "depth", "queue_x_depth", "waiting", "peers_await_max", "slowest_peer_x_mine",
            "members_queue_sum", "members_inferred", "parent_await_x_mine", "held_in_layer", "peers_outlier_ratio", "w_share", "rareq_kb", "wareq_kb", "util_impossible", "below_class_floor"]
_DEVICE_FIELDS = ["device", "class", "parallel", "baseline_ms", "rotational", "scheduler", "read_ahead_kb",
                  "max_sectors_kb", "max_hw_sectors_kb", "nr_requests", "optimal_io_size", "md_level", "stripe_kb",
                  "members", "samples", "util_p95", "await_p95", "aqu_p95", "iops_p95", "mb_s_p95", "areq_kb_p95",
                  "areq_kb_median", "r_share", "busy_share", "at_max_sectors_share", "read_mb_s_p95",
                  "write_areq_kb_median", "w_share", "mixed_io", "model", "areq_over_read_ahead",
                  "max_sectors_below_hw"]
PERF_FIELDS = {"intervals": set(SERIES_FIELDS) | set(_DERIVED), "perf_devices": set(_DEVICE_FIELDS)}
