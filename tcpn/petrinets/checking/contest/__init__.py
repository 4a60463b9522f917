"""The Model Checking Contest: its examinations on a PNML model, its property files, its
known answers, and its global properties (deadlock, liveness, quasi-liveness, ...)."""
