"""The state-space explorer in C, for untimed nets of the C engine's subset (see
:mod:`~tcpn.petrinets.statespace.cexplore.explorer`; ``explore.c`` is the search)."""
