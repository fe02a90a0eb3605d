from podlife.engine.kernel import Kernel, Process

__all__ = ["Kernel", "Process"]
