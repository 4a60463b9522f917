"""The five studies as runnable experiments, and HTML/PDF reports of their results.

May import: every other tcpn layer except tcpn.cli.
"""
