"""podlife for test suites: a live cluster per test (``podlife.testing.cluster``), the pytest plugin that hands it
out (``podlife.testing.plugin``, registered as the ``pytest11`` entry point ``podlife``) and the CI helper the
GitHub Action runs (``podlife.testing.ci``). Nothing here is imported by the ``podlife`` command."""

from podlife.testing.cluster import ClusterOptions, PodlifeCluster, PodlifeTimeout, Snapshot

__all__ = ["ClusterOptions", "PodlifeCluster", "PodlifeTimeout", "Snapshot"]
