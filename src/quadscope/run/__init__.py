"""Run: turn what the user asked for into planned runs, execute them, store each at once.

The second stage of the flow. `spec` (what was asked, checked), `sizes` (the
`--sizes` notation), `plan` (the `Plan` protocol: policies handing out
batches; fixed and accumulate plans), `adaptive` (the budgeted plan) and
`runner` (the one loop that executes a plan's batches through an `Executor`
and writes every run to the store as it ends). Imports go one way:
spec, plan <- adaptive <- runner.
"""
