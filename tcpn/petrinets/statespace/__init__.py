"""State spaces: every reachable marking of a net, explored, stored compactly, as a graph.

Lives here: the explorer of coloured timed nets on the compiled code
(:mod:`~tcpn.petrinets.statespace.space`), its marking store, the graph algorithms over an
explored space (:mod:`~tcpn.petrinets.statespace.graph`: SCCs, home and dead markings), the
vector explorer of place/transition nets (:mod:`~tcpn.petrinets.statespace.ptspace`), the
explorer in C (:mod:`~tcpn.petrinets.statespace.cexplore`), what makes a timed net finite to
explore (delay intervals as choices, offset groups, relative clocks) and the memory budget.

A new way of exploring (a reduction that changes what is stored, a new encoding) goes here;
a new logic does not (:mod:`tcpn.petrinets.checking`).

May import: the net language, the engines and the ground floor.
Must not import: the checkers, exchange, drawing, or anything of TCP.
"""
