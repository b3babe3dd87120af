"""Exceptions of the rbf package beyond Python's own."""


class TraceError(ValueError):
    """A trace that cannot be read as asked: malformed or damaged data, or no messages.

    The command line reports these with exit status 1; the message is the same.
    """
