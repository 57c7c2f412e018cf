"""One-time prekeys after the agent's store was put back from an older copy (a restore).

The lost, newer state published one-time prekeys under the ids that follow the restored
counter (`next_one_time_prekey_id`), and their private halves are gone: a person given one
cannot start a session. The relay can neither list nor delete them, but an upload under an id
it holds replaces that key (the emulator's rule; PROTOCOL.md is silent). So after a restore
the agent makes fresh keys for the next RESTORE_REKEYED_PREKEYS ids and publishes them at the
next connection (agent/prekeys.py); keys beyond those, or already handed out, still fail one
first message each (issues/decrypt.py). A restore is seen as a store behind its witness at
start-up (store/generation.py) or an `unknown_prekey` first message while running. Once per
run, not while MAX_HELD_FOR_REKEY keys are held; without a restore it only adds unused ids.
"""

import logging
from dataclasses import replace

from ..limits import RESTORE_REKEYED_PREKEYS
from ..values.agent_data import AgentData

_LOGGER = logging.getLogger(__name__)


def rekeyed_after_restore(data: AgentData) -> AgentData:
    """`data` with fresh one-time prekeys for the next ids of its counter, marked unpublished
    (CPU work: run it in the executor); logged at warning."""
    prekeys = data.signal.prekeys
    target = len(prekeys.one_time_prekeys) + RESTORE_REKEYED_PREKEYS
    updated, created = prekeys.replenish_one_time_prekeys(target)
    ids = [prekey.prekey_id for prekey in created]
    _LOGGER.warning(
        "%d one-time prekeys (ids %s to %s) are made again and published, replacing those "
        "that a newer copy of this agent's state published",
        len(ids),
        ids[0] if ids else "-",
        ids[-1] if ids else "-",
    )
    return replace(
        data,
        signal=data.signal.with_prekeys(updated),
        published_prekeys=data.published_prekeys - set(ids),
    )
