"""Domain errors of the retrieval core. They carry no HTTP codes; `service/errors.py` maps them.

    CtxsieveError
    ├── NotFound            unknown ref / toolset / collection (or another tenant's)
    ├── Gone                a ref past the retention period
    ├── InvalidRequest      a combination of fields that cannot be served
    ├── InvalidInput        a field's value cannot be served (a bad tool definition, a range off the end)
    ├── StoreUnavailable    the vector store cannot be reached or written
    ├── UpstreamFailed      an outside service (web search) answered with an error; its message verbatim
    ├── UpstreamTimeout     an outside service did not answer in time
    ├── Forbidden           a path outside the read roots
    ├── UnsupportedMedia    not text
    ├── TooLarge            over a size limit
    └── Overloaded          inference queue full; retry later
"""


class CtxsieveError(Exception):
    """Base of every error the core raises on purpose."""


class NotFound(CtxsieveError):
    pass


class InvalidRequest(CtxsieveError):
    pass


class InvalidInput(CtxsieveError):
    pass


class StoreUnavailable(CtxsieveError):
    pass


class UpstreamFailed(CtxsieveError):
    pass


class UpstreamTimeout(CtxsieveError):
    pass


class Forbidden(CtxsieveError):
    pass


class UnsupportedMedia(CtxsieveError):
    pass


class TooLarge(CtxsieveError):
    pass


class Overloaded(CtxsieveError):
    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Gone(CtxsieveError):
    """A ref past the retention period (its tombstone remains for a while). `setting` names the option that set
    the period, in the core's words; each surface says how its users set it."""

    def __init__(self, message: str, setting: str) -> None:
        super().__init__(message)
        self.setting = setting
