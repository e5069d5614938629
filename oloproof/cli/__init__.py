"""The command line: ``oloproof.cli.main.main(argv) -> int``, one module per subcommand, each a
few dozen lines of glue over the library. Nothing is imported here."""
