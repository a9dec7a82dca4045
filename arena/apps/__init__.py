"""The commands people run: the ``arena`` command line, ``arena check`` and
``arena play``. Nothing imports this layer."""
