"""The example suites' shared setup: this directory on the import path (pytest puts a conftest's directory
there) for ``policy``, ``workloads`` and ``behaviours``. The ``podlife_cluster`` fixture comes from podlife's
pytest plugin, found through its entry point once podlife is installed."""
