"""The held group keys by group, worked out once per mapping of keys.

A new Conversations comes with each message (its last devices), while its mapping of group
keys stays the same object until a key is learned, used or evicted: the index is kept by
that mapping's identity (the mapping held with it, so its id is never reused meanwhile),
for the KEPT latest mappings (several agents ask). The loop and the executor both ask.
"""

import threading
from collections import OrderedDict
from collections.abc import Mapping
from types import MappingProxyType

from .groups import GroupKey

KEPT = 8

type Index = Mapping[str, tuple[GroupKey, ...]]

_EMPTY: Index = MappingProxyType({})
_lock = threading.Lock()
_kept: OrderedDict[int, tuple[Mapping[str, GroupKey], Index]] = OrderedDict()


def keys_by_group(keys: Mapping[str, GroupKey]) -> Index:
    """Conversation id -> its keys in `keys`, in their order (the least recently used first)."""
    if not keys:
        return _EMPTY
    with _lock:
        found = _kept.get(id(keys))
        if found is not None and found[0] is keys:
            _kept.move_to_end(id(keys))
            return found[1]
    grouped: dict[str, list[GroupKey]] = {}
    for key in keys.values():
        grouped.setdefault(key.conversation_id, []).append(key)
    index: Index = MappingProxyType({cid: tuple(held) for cid, held in grouped.items()})
    with _lock:
        _kept[id(keys)] = (keys, index)
        _kept.move_to_end(id(keys))
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    return index
