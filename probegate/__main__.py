"""``python -m probegate``: the same as the ``probegate`` command."""

from probegate.cli import main

main()
