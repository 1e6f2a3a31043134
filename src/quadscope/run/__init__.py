"""Run: turn what the user asked for into planned runs, execute them, store each at once.

The second stage of the flow. `spec` (what was asked, checked), `sizes` (the
`--sizes` notation), `plan` (the `Plan` protocol: policies handing out
batches; fixed, accumulate and agreeing plans), `adaptive` (the budgeted plan),
`runner` (the one loop that executes a plan's batches through an `Executor`
and writes every run to the store as it ends), with `rescue` (the runs a
killed quadscope's launcher kept, stored at the next opening of the store),
and `session` (the one wiring every entry point starts a sweep through: host
facts, meter, executor, runner). Imports go one way:
sizes <- spec, plan <- adaptive, rescue <- runner <- session.
"""
