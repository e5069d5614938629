from oloproof.cli import main

raise SystemExit(main())
