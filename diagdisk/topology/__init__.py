"""Topology: command outputs (/proc/scsi/scsi, lsscsi, lsblk, mdstat, mdadm, by-id, multipath),
smartctl reports and the links the logs showed enter; one device table leaves, every event resolved
to the best identity the text allows, with md arrays and SMART health per device."""
