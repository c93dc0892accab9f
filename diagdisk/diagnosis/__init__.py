"""Diagnosis: the evidence of one host enters (its records, device table, md arrays and SMART, as
gathered by analysis.analyze); findings and a verdict leave, from the declarative rules in rules/
evaluated over the event table and the device table."""
