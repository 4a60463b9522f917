"""``python -m tcpn``: the same command line as ``tcpn`` (for an environment whose scripts
directory is not on the PATH)."""

from tcpn.cli import main

main()
