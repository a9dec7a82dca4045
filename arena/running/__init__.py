"""A run: config, schedule, workers and backends (local pool, Ray), the run
folder, and the runner that ties them together for ``arena run``."""
