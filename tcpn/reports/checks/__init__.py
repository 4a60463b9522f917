"""What ``tcpn check`` prints and writes: formulas checked on a net
(:mod:`~tcpn.reports.checks.formulas`), the property library checked on a scenario
(:mod:`~tcpn.reports.checks.properties`), and message-sequence charts of counterexamples
(:mod:`~tcpn.reports.checks.msc`)."""
