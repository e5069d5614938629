"""Rules over a subset of cases (``where:``) and one verdict per slice (``per:``), issue 18 §1-2."""
