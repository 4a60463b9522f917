"""``python -m tcpn``: the same command line as ``tcpn`` (for an environment whose scripts
directory is not on the PATH). Imported (as the docstring tests import every module), it
runs nothing."""

from tcpn.cli import main

if __name__ == "__main__":
    main()
