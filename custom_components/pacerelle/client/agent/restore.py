"""One-time prekeys after the agent's store was put back from an older copy (a restore).

The lost, newer state went on publishing one-time prekeys after the backup: their ids
follow the restored state's counter (`next_one_time_prekey_id`, one after the other), and
their private halves went with that state. The relay hands its oldest keys out first, so a
person whose app then fetches the agent's bundle gets one of them, and their first message
cannot be decrypted: they cannot start a session at all.

The relay's API has no call to list or delete them, but an upload under an id it holds
replaces that key (the emulator's rule; PROTOCOL.md is silent, and keys are stored by id).
So after a restore the agent makes fresh keys for the next RESTORE_REKEYED_PREKEYS ids of
its counter (the ids the lost state used, in its order) and publishes them at the next
connection, with the bundle (agent/prekeys.py; api.py uploads them in chunks): every key
the lost state published among those ids is replaced by one whose private half the agent
holds. A lost state that published more than that (about three refills of 31, some 90 new
sessions after the backup) leaves keys beyond, each of which fails one new device's first
message. Keys of the lost state already handed out cannot be taken back: that person's
first message fails and their device has to start over, as for every session the restore
lost (issues/decrypt.py).

Two signs of a restore lead here: at start-up, a store behind its witness (only an agent
folder put back on its own: store/generation.py); while running, a first message that
names a prekey the agent does not hold (`unknown_prekey`), which is what a full restore of
Home Assistant (witness rolled back too) shows first. That message is lost, but the next
new devices get keys the agent holds. Once per run, and not while MAX_HELD_FOR_REKEY keys
are held; without a restore it only adds keys under ids never published.
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
