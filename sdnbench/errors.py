"""Errors that sdnbench reports to the user as one clear line, never a traceback."""


class SdnbenchError(Exception):
    """Base of every error the CLI prints as a message and exit code 2."""


class ConfigError(SdnbenchError):
    """An experiment file is invalid: says file, line, key and what was expected."""

    def __init__(self, message, path=None, line=None, key=None, column=None):
        self.path, self.line, self.key, self.detail, self.column = path, line, key, message, column
        where = ""
        if path:
            where = f"{path}:{line}{f':{column}' if line and column else ''}: " if line else f"{path}: "
        keytext = f"{key}: " if key else ""
        super().__init__(f"{where}{keytext}{message}")


class CapabilityError(SdnbenchError):
    """The machine lacks something the experiment needs (names it and the fix)."""


class ControllerError(SdnbenchError):
    """A controller could not be started, did not listen, or switches did not connect."""


class ToolError(SdnbenchError):
    """A traffic or load tool failed or printed output sdnbench cannot read."""


class P4RuntimeError(SdnbenchError):
    """A P4Runtime device did not answer or refused a request: names the device and what failed."""

    def __init__(self, address: str, what: str, detail: str):
        self.address, self.what, self.detail = address, what, detail
        super().__init__(f"P4Runtime device {address}: {what}: {detail}")
