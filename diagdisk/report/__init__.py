"""Reports: the findings, verdict and evidence of one host enter; what the user reads leaves: the
JSON contract (diagdisk.report/1), the terminal summary and the self-contained HTML page."""
