"""Sweeps: one scenario run at many points (versions, seeds, field values), on Dask."""
