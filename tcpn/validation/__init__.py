"""Ground truth and comparison: the ns-3 lens, pcap/trace readers, the metrics module.

Lives here: the shared metrics module used by every lens, the ns-3 runner, pcap reading
and the cross-validation harness.

May import: tcpn.petrinets, tcpn.models. Must not import: tcpn.solvers, tcpn.reports,
tcpn.cli.
"""
