"""`make cluster`: the production topology (a proxy, two web nodes, two worker nodes, one beat,
PostgreSQL, Redis) built on one host in network namespaces, driven through the proxy while a web
node and a worker node are killed, and judged by `ops.cluster.verdict`."""
