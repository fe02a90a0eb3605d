"""Importing a real cluster's state (``podlife import``, ``run --from``, ``up --from``): read the dump, clean it,
restore its objects into a cluster that starts mid-life, and sum up what a scenario did to it."""
