"""People at the table: the seating shared by ``arena play`` and ``arena serve``,
and the browser table of ``arena serve`` (docs/serve.md)."""
