"""The component library: TCP senders and receivers, queues, links, token buckets.

Lives here: the scenario schema and the topology composer that turns a scenario into one
timed coloured Petri net built with :mod:`tcpn.petrinets`.

Must not import: tcpn.solvers, tcpn.validation, tcpn.reports, tcpn.cli.
"""
