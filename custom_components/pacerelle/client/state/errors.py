"""The store's errors: why a store could not be read or written."""

from enum import StrEnum

from ..errors import ErrorKind, PacerelleError


class StoreProblem(StrEnum):
    """Why a store could not be read. Each is a repair issue, never a reason for a new identity."""

    MISSING = "store_missing"
    KEY_MISSING = "store_key_missing"
    CORRUPT = "store_corrupt"
    UNDECRYPTABLE = "store_undecryptable"
    LOCKED = "store_locked"  # open in another process: nothing wrong with the store itself


class StoreError(PacerelleError):
    """The store could not be read or written."""

    kind = ErrorKind.STORE

    def __init__(self, problem: StoreProblem, detail: str) -> None:
        super().__init__(f"{problem}: {detail}")
        self.problem = problem
        self.detail = detail


class DocumentTooLargeError(StoreError):
    """The document would be larger than loading accepts: nothing was written."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(StoreProblem.CORRUPT, f"{size} bytes, over the limit of {limit}")
        self.size = size
        self.limit = limit

    @property
    def excess(self) -> int:
        """Bytes of serialized document to drop before the write can succeed."""
        return self.size - self.limit
