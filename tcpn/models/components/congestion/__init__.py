"""The congestion-control variants, one file each, every one registered with
:func:`tcpn.models.register_variant` as a variant of a user's package would be: the
loss-based family (Tahoe, Reno, NewReno, SACK, ECN), the Vegas family, Westwood+, TCP-L,
CUBIC, BBR and DCTCP. The sender, receiver and queues they build on are in
:mod:`tcpn.models.components`."""
