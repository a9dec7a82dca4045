"""Bot files: what a bot is on disk (its own files, their hash), the runtime it
needs inside the sandbox, and what it declares it can play. Reads files,
runs nothing of a bot's."""
