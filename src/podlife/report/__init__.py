"""The report made of a run (header, records, outcome; JSON, NDJSON, klog, HTML, summary, diff, explain):
see CONTRIBUTING.md, "Where a report comes from". The recording itself is podlife.trace."""
