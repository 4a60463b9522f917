"""Exception classes shared by every tcpn layer (a leaf module: imports nothing of tcpn).

Every error tcpn raises on purpose derives from :class:`TcpnError`; the CLI prints its
message as one line and maps the class to an exit code. :class:`InputError` means the
user's input (a net, a scenario, a file, a parameter) is at fault; anything else derived
from :class:`TcpnError` is a failure while running valid input.
"""


class TcpnError(Exception):
    """Base class of the errors tcpn raises deliberately."""


class InputError(TcpnError, ValueError):
    """The user's input is invalid: the message names the element, field or line at fault."""


class InputFileError(InputError):
    """A file the user gave (a capture, a trace) cannot be read or is corrupt: bad input
    wherever it shows, never a lens's refusal of a scenario it cannot express."""
