"""ember.checkpoint: object-graph checkpoints in safetensors files, atomic and checksummed.

Checkpoints save the state of Python objects by the *paths* that reach them
(``model/dense1/kernel``, ``optimizer/slots/model/dense1/kernel/m``), never by position or
creation order. The package imports no other ember package: it walks objects through a
small duck-typed protocol that ember.nn, ember.core and ember.data implement without
importing it.

The object-graph protocol
-------------------------

* **Values (leaves).** An object with ``numpy()`` (returns a host ``numpy.ndarray``),
  ``assign(value)`` (takes a numpy array, keeps its own dtype and device), ``.shape`` and
  ``.dtype`` (a numpy dtype or anything ``numpy.dtype()`` accepts). A ``numpy.ndarray`` is
  also a value, restored in place with ``numpy.copyto``. An optional
  ``__checkpoint_assign__(array)`` takes a restored value without a copy: ``array`` is
  fresh (nothing else holds it) and of the value's dtype and shape; it returns a callable
  that puts the previous value back (called if a later part of the restore fails) and
  leaves the value unchanged if it raises. Without it, ``assign(array)`` is called and a
  copy of ``numpy()`` kept for that rollback. An optional ``__checkpoint_buffer__()``
  returns the value's own writable host array, of its dtype and shape, or None: a
  restore writes into it in place, last, once every checksum matched (it is asked again
  then), so it must return an array only while nothing else could see the write.
* **Containers.** ``__checkpoint_children__(self) -> Mapping[str, object]``: named
  children in the object's current state. ``dict`` (str keys), ``list`` and ``tuple`` are
  containers natively (elements named ``"0"``, ``"1"``, ...). Names are non-empty and
  contain no ``/``. Children that take no part (numbers, strings, functions) are skipped.
* **Slots.** ``__checkpoint_slots__(self) -> Iterable[(primary, slot_name, slot)]``
  (optimizers), saved as ``<owner path>/slots/<primary's path>/<slot_name>``. Slots of
  variables that the checkpoint does not reach otherwise are skipped.
* **Opaque state.** ``__checkpoint_state__(self)`` returns a JSON-like value (dicts with
  str keys, lists, tuples, str, bool, None, ints of any size, floats including nan/inf,
  bytes, numpy arrays and scalars: all round-trip exactly) and
  ``__checkpoint_restore_state__(self, state)`` takes it back. An optional
  ``__checkpoint_validate_state__(self, state)`` raises if the state does not fit; it is
  called before anything is assigned. ``numpy.random.Generator``,
  numpy bit generators and ``random.Random`` take part natively.
* **Deferred restoration.** ``__checkpoint_listen__(self, listener)`` registers a listener;
  the container then calls ``listener.child_created(owner, name, child)`` whenever it
  gains a named child later (a layer building ``kernel``), and optimizers call
  ``listener.slot_created(owner, primary, slot_name, slot)`` when they create a slot. A
  restored value whose object did not exist yet is assigned at that moment (its dtype,
  shape and checksum checked then; a mismatch raises ``CheckpointMismatchError`` naming
  the path), and new containers are walked and listened to in turn.
* **Sharing.** An object reached by several paths is saved once, under its first path in
  a breadth-first walk with children in sorted name order; the other paths are recorded as
  aliases.

Files are safetensors with the graph and per-tensor CRC-32C checksums in the header
metadata; nothing is ever pickled or executed on load. Saves are atomic and durable;
restores are all or nothing.
"""

from ._checkpoint import Checkpoint, SaveCounter
from ._errors import (
    CheckpointError,
    CheckpointIOError,
    CheckpointLockedError,
    CheckpointMismatchError,
    CheckpointNotFoundError,
    CorruptCheckpointError,
    IncompleteRestoreError,
)
from ._format import CheckpointFile
from ._index import latest_checkpoint
from ._inspect import list_variables, load_variable
from ._manager import CheckpointManager
from ._status import RestoreStatus
from ._version import __version__ as __version__  # tf.__version__, keras.__version__

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointFile",
    "CheckpointIOError",
    "CheckpointLockedError",
    "CheckpointManager",
    "CheckpointMismatchError",
    "CheckpointNotFoundError",
    "CorruptCheckpointError",
    "IncompleteRestoreError",
    "RestoreStatus",
    "SaveCounter",
    "latest_checkpoint",
    "list_variables",
    "load_variable",
]
