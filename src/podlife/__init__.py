"""podlife: the Kubernetes pod lifecycle, simulated."""

__version__ = "0.1.0"
