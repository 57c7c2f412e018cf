"""Prekey publication: rotate when due, top up, save the private keys, then publish.

At each connection the bundle (identity, current signed and Kyber prekeys, history-v1) is
put again and any one-time prekey not yet published is posted. Private keys are always
saved before their public halves leave; the ids already published are saved too, so no
one-time prekey is ever published twice (the relay may have handed one out whose first
message has not arrived yet). Between connections, keys used up by new sessions are
replenished once fewer than the low-water mark remain.
"""

import asyncio
import logging
import time
from dataclasses import replace
from functools import partial

from ..agent_core import AgentCore
from ..errors import PacerelleError
from ..limits import MAX_HELD_FOR_REKEY
from ..relay.api import AgentApi
from ..signal.prekeys import one_time_prekeys_json
from ..state.errors import StoreError
from .restore import rekeyed_after_restore

_LOGGER = logging.getLogger(__name__)


class PrekeyPublisher:
    def __init__(self, core: AgentCore, api: AgentApi) -> None:
        self._core = core
        self._api = api
        self._publishing = asyncio.Lock()  # one publication at a time: no id sent twice

    async def publish(self) -> None:
        async with self._publishing:
            await self._prepare()
            await self._send()

    async def keep_up(self, used: asyncio.Event) -> None:
        """Replenish once sessions have used one-time prekeys below the low-water mark."""
        while True:
            await used.wait()
            used.clear()
            if not self._core.data.signal.prekeys.needs_one_time_prekeys():
                continue
            try:
                await self.publish()
            except StoreError:
                raise  # a failed save is no failed publication
            except PacerelleError as err:
                _LOGGER.info("Could not replenish one-time prekeys yet: %s", err)

    async def rekey_after_restore(self) -> None:
        """A first message named a prekey this agent never held: most likely its state was
        restored from a backup (a full restore is not seen at start-up): agent/restore.py."""
        try:
            await self._rekey_once()
        except Exception:  # a failed save: never an error out of stop()
            _LOGGER.exception("Could not make new one-time prekeys")

    async def _rekey_once(self) -> None:
        core = self._core
        async with core.lock:
            if len(core.data.signal.prekeys.one_time_prekeys) >= MAX_HELD_FOR_REKEY:
                return
            _LOGGER.warning(
                "A first message names a prekey that agent %s does not hold: its state was "
                "most likely restored from an older copy",
                core.config.agent_id,
            )
            data = await core.hooks.run_blocking(partial(rekeyed_after_restore, core.data))
            await core.commit(data)
        try:
            await self.publish()
        except StoreError:
            raise  # a failed save is no failed publication
        except PacerelleError as err:  # they go out with the next connection's publication
            _LOGGER.info("Could not publish the new one-time prekeys yet: %s", err)

    async def _prepare(self) -> None:
        """Rotate and top up, saved before anything is published."""
        core = self._core
        async with core.lock:
            data = core.data
            now = int(time.time())
            current = data.signal.prekeys
            if current.rotation_due(now):  # new Kyber and X25519 keys, signed: off the loop
                prekeys = await core.hooks.run_blocking(lambda: current.rotate(now))
            else:
                prekeys = current.drop_expired(now)
            if prekeys.needs_one_time_prekeys():
                topped = prekeys
                prekeys = await core.hooks.run_blocking(
                    lambda: topped.replenish_one_time_prekeys()[0]
                )
            if prekeys is not data.signal.prekeys:
                await core.commit(replace(data, signal=data.signal.with_prekeys(prekeys)))

    async def _send(self) -> None:
        core = self._core
        prekeys = core.data.signal.prekeys
        await self._api.put_prekey_bundle(prekeys.bundle_json())
        published = core.data.published_prekeys
        fresh = [p for p in prekeys.one_time_prekeys if p.prekey_id not in published]
        if not fresh:
            return
        await self._api.post_one_time_prekeys(one_time_prekeys_json(fresh)["one_time_prekeys"])
        async with core.lock:
            data = core.data
            held = {p.prekey_id for p in data.signal.prekeys.one_time_prekeys}
            ids = (data.published_prekeys | {p.prekey_id for p in fresh}) & held
            await core.commit(replace(data, published_prekeys=frozenset(ids)))
