"""Kinds of measure a rule decides on: one module each (what it reads, its estimate, its intervals,
its paired form, how it is shown and stored), listed in ``oloproof.measures.registry``."""
