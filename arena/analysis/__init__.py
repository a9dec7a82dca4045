"""What a run folder says: records to tables, ratings, rule-variant
statistics and the HTML report. Reads the run folder only."""
