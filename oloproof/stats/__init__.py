"""Pure statistics: no files, no environment, no clock. Randomness is passed in."""
