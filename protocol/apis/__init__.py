"""Every API kcsim declares, discovered from the modules of this package.

Each module declares one or more `Api` objects in a module-level `APIS` tuple
(or a single `API`). Data structures that are not requests or responses (the
consumer protocol's subscription and assignment) are exported as `DATA`.
`MODULE_OF` names the module declaring each message: its static class lives in the
module of the same name in `protocol/messages` (see `protocol/typegen.py`).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..schema import Api, Message

APIS: dict[int, Api] = {}
DATA: dict[str, Message] = {}
MODULE_OF: dict[str, str] = {}  # message name -> declaring module, in declaration order


def _declared_in(module: str, message: Message) -> None:
    if message.name in MODULE_OF:
        raise RuntimeError(f"message {message.name} declared twice")
    MODULE_OF[message.name] = module


for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    _mod = importlib.import_module(f"{__name__}.{_info.name}")
    for _api in getattr(_mod, "APIS", ()) or ((_mod.API,) if hasattr(_mod, "API") else ()):
        if _api.key in APIS:
            raise RuntimeError(f"API key {_api.key} declared twice")
        APIS[_api.key] = _api
        _declared_in(_info.name, _api.request)
        _declared_in(_info.name, _api.response)
    for _msg in getattr(_mod, "DATA", ()):
        DATA[_msg.name] = _msg
        _declared_in(_info.name, _msg)
