from podlife.engine.kernel import Kernel, Process, few_collections

__all__ = ["Kernel", "Process", "few_collections"]
