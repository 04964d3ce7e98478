"""`python -m ops.cluster`: see ops/cluster/cli.py."""

from ops.cluster.cli import main

raise SystemExit(main())
