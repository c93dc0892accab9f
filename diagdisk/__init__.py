"""diagdisk: find the physical storage part to replace, with evidence, from kernel logs and sosreports."""

__version__ = "0.1.0"
