"""Analyse: pure functions of stored runs, never running a workload.

The fourth stage of the flow, after the store. `stats` (medians, bootstrap,
least squares), `fitting` (how one metric grows), `compare` (A against B),
`analysis` (everything a report shows, computed once) and `gate` (CI gates).
"""
