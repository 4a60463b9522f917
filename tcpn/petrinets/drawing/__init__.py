"""Drawing nets with Graphviz: every place and transition (:mod:`~tcpn.petrinets.drawing.dot`),
or a composed net by its modules (:mod:`~tcpn.petrinets.drawing.modules`).

May import: the net language and the ground floor."""
