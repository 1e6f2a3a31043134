"""Analyse: pure functions of stored runs, never running a workload.

The fourth stage of the flow, after the store. `stats` (medians, bootstrap,
least squares); `fitting` (how one metric grows), which runs the method over
`classfit` (the models and their bootstrap), `evidence` (the statistics the
verdict reads) and `verdict` (the ordered checks, folded into the verdict),
with `drift`, `slopes`, `regime` and `terms` (what a single class misreads),
`memory` (time that outgrows the caches) and `launches` (accumulate mode's
pools); `text` (every sentence about a verdict); `compare` (A against B) and
`change` (its one line); `headline` (the verdict line); `notable` (which
metrics a report shows, medians at the largest size) and `curves` (each fit's
drawn curve and band); `analysis` (everything a report shows, computed once);
`gate` and `ab_gate` (CI gates, values in, outcomes out); `history` (a name's
sweeps across commits).
"""
