"""Ground truth and comparison: the ns-3 lens, pcap/trace readers, the metrics module.

Lives here: the shared metrics module used by every lens, the ns-3 runner, pcap reading
and the cross-validation harness.

May import: tcpn.petrinets, tcpn.models, and tcpn.solvers.replications (the harness runs
each lens's replications through it; the other lenses are reached by name through
tcpn.models.lenses). Must not import: the rest of tcpn.solvers, tcpn.reports, tcpn.cli.
"""
