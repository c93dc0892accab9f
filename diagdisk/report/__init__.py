"""Reports: the JSON contract (diagdisk.report/1), the terminal summary and the HTML page."""
