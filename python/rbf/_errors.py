"""Exceptions of the rbf package beyond Python's own."""


class SettingError(ValueError):
    """A bad setting: a flag's value, a config key, a field of a workload file.

    ``key`` names it as the user wrote it (``sigma``, ``grid.memory``); the message is the
    command line's, which reports it with exit status 2.
    """

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.key = key


class TraceError(ValueError):
    """A trace that cannot be read as asked: malformed or damaged data, or no messages.

    The command line reports these with exit status 1; the message is the same.
    """
