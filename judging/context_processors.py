"""The choices judging's templates compare against (`p.status == RunStatus.DONE`,
`split == Split.HELD_OUT`, `gate.decision == Gate.HOLD`), never bare strings a rename would
silently miss."""

from judging.gates import GO, HOLD
from judging.models import RunStatus, Split


def choices(request) -> dict:
    return {"RunStatus": RunStatus, "Split": Split, "Gate": {"GO": GO, "HOLD": HOLD}}
