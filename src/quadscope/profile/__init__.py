"""Sampling and attribution (issue 3): which function makes it grow, kernel included.

Data flows one way: sampler (perf / py-spy / fake) -> `StackProfile` per size
-> folded files -> `attribute` (pure) -> `Attribution` -> stored blob
"profile" and the differential flame graph. See `driver.profile_sweep`.

The package imports none of its modules: import the one you need
(`quadscope.profile.records` for the stored records, `.driver` to take a
profile). Reading a stored `Attribution` thus never loads the samplers or
the fitting (scipy), and `quadscope --help` stays instant.
"""
