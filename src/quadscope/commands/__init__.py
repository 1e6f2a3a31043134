"""Sub-commands: one module per command, each with `register(subparsers)`, which
declares its parser and sets `func`, the function `cli.main` calls with the
parsed arguments (`run(args) -> int`; `stored` serves list, show, export and
compare with `run_list`, `run_show`, `run_export` and `run_compare`).
`cli.COMMANDS` says which module serves which command. Shared by them, not
commands themselves: `common` (the store option, output files, printing an
analysis), `gates` (the CI gate options) and `fleet` (`--fleet`)."""
