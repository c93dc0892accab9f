"""Performance: what enters is the performance sources of one input (sar text in any locale and
sysstat era, sadf -x/-d/-j, iostat -x text, /proc/diskstats, /proc/partitions, sys/block/*/queue,
lsblk -t, blockdev --report, /proc/pressure/io, dmsetup and lvs outputs) and the device table of
the topology stage; what leaves is one normalised series per device (IOPS, MB/s, request size,
queue length, await, service time, utilisation on one time axis), each device's class, aliases,
peer groups and queue settings, and what each source was (kind, era, locale, interval, truncation).

sysstat (sar/iostat text) -> sadf (XML/CSV/JSON) -> kernel (diskstats, queue settings, names) ->
series (normalised samples, bounded memory) -> devices (classes, peer groups) -> read (the entry
point). The rules that judge the series live in the diagnosis stage.
"""
