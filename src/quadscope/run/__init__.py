"""Run: turn what the user asked for into planned runs, execute them, store each at once.

The second stage of the flow. `spec` (what was asked, checked), `sizes` (the
`--sizes` notation), `plan` (fixed and accumulate plans), `adaptive` (the
budgeted plan) and `runner` (executes the plans' batches through an
`Executor` and writes every run to the store as it ends).
"""
