"""`python -m ops.cluster`: see ops/cluster/run.py."""

from ops.cluster.run import main

raise SystemExit(main())
