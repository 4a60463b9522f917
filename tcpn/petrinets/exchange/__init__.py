"""Exchange formats: CPN Tools (.cpn) export and import, PNML, and CPN ML translation."""
