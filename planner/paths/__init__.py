"""The path comparison's application layer: CPU, GPUs, TPUs and a managed API for one workload."""
