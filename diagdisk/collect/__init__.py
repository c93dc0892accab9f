"""``diagdisk collect``: a bounded, read-only collector that writes one sosreport-shaped bundle.

runner (one timed command) -> items (what to collect, where it lands) -> bundle (run the plan,
write the .tar.gz and manifest.json) -> cli (the click command).
"""
