from oloproof.cli.main import main

raise SystemExit(main())
