"""Fleet: many sosreports and bundles (thousands) enter, each analysed alone on a Dask cluster; one
JSON (and HTML) report per input, the fleet tables (fleet.parquet, fleet.csv, suspects.parquet,
docs/fleet.md) and the fleet page (fleet.html) leave.

Dask (`dask.distributed`) and pyarrow come with the `fleet` extra; nothing here imports them at
module level, so the rest of diagdisk works without them."""
