"""``save_model``/``load_model`` and ``save_weights``/``load_weights``: Keras 3's files.

A ``.keras`` file holds the model's config (its architecture, ``build_config`` and, when
compiled, ``compile_config`` with the optimizer's hyperparameters), its weights and the
optimizer's variables (``iterations``, the learning rate, every slot) in Keras's
``model.weights.h5``, and, in ``metadata.json``, ember's random state: the global
generator's, that of every ``seed=`` a layer of the model draws with, and that of every
random stream a layer keeps (a ``SeedGenerator`` or ``em.random.Generator`` attribute,
such as the random image layers' ``seed_generator``). ``load_model``
puts all of it back, so training resumes exactly where the saved model stood: the next
steps give the same numbers, bit for bit, as the saved model's would have.

Loading builds the model within a budget: its variables may take no more bytes than the
weights file holds (a config asking for more is refused before any memory is taken).
"""

from __future__ import annotations

import datetime
import os
import warnings
from typing import Any

import numpy as np

import ember.core as em

from . import _archive, _atomic, _h5, _layouts, _safetensors, _serialization, _walk

KERAS_FORMAT_VERSION = "3.16.0"  # the Keras 3 release whose file layout ember writes
_SLACK = 1 << 20  # bytes of budget beyond the weights file (HDF5's own overhead is larger)


def _path(filepath: Any, op: str) -> str:
    if not isinstance(filepath, (str, os.PathLike)):
        raise TypeError(f"{op}: filepath must be a str or os.PathLike, got "
                        f"{type(filepath).__name__}")
    return os.fspath(filepath)


def _ember_version() -> str:
    try:
        from importlib.metadata import version

        return version("ember-nn")
    except Exception:  # not installed as a distribution (a source checkout)
        return "unknown"


# --- the weights of a model, in Keras's layout -------------------------------------------

def _groups(model: Any, include_optimizer: bool) -> list[tuple[str, str, list[np.ndarray]]]:
    out = []
    opt = getattr(model, "optimizer", None) if include_optimizer else None
    if opt is not None and _walk.optimizer_built(_walk.slot_owner(opt)):
        _walk.build_optimizer(_walk.slot_owner(opt), model.trainable_variables)
    shapes = _layouts.saved_shapes(model)
    for path, obj in _walk.saveables(model, include_optimizer):
        if _walk._is_optimizer(obj):
            variables = _walk.optimizer_variables(obj, model.trainable_variables)
            _layouts.add_slot_shapes(obj, model.trainable_variables, shapes)
        else:
            variables = _walk.own_variables(obj)
        arrays = [_walk.value_of(v) for v in variables]
        out.append((path, str(obj.name), [a.reshape(shapes[id(v)]) if id(v) in shapes else a
                                          for v, a in zip(variables, arrays)]))
    return out


class _SafetensorsStore:
    """A safetensors file seen as Keras's groups: ``path/vars/i`` names."""

    def __init__(self, data: bytes, where: str) -> None:
        self.file = _safetensors.SafetensorsWeights(data, where)
        self.where = where
        self.groups: dict[str, list[str]] = {}
        for name in self.file.names():
            head, sep, index = name.rpartition("vars/")
            if not sep or not index.isdigit() or (head and not head.endswith("/")):
                raise ValueError(f"{where}: tensor {name!r:.80} is not named as a weight "
                                 f"(<path>/vars/<index>)")
            self.groups.setdefault(head.rstrip("/"), []).append(index)
        for path, keys in self.groups.items():
            if sorted(int(k) for k in keys) != list(range(len(keys))):
                raise ValueError(f"{where}: the weights of {path or 'the model'} are not "
                                 f"numbered 0..{len(keys) - 1}")

    def count(self, path: str) -> int:
        return len(self.groups.get(path, []))

    def read(self, path: str, index: int, like: Any) -> np.ndarray:
        return self.file.read(f"{path}/vars/{index}" if path else f"vars/{index}", like)

    def close(self) -> None:
        pass


def _fit(value: np.ndarray, var: Any, where: str, name: str) -> np.ndarray:
    want = np.dtype(var.dtype)
    if value.dtype == want:
        return value
    kinds = {value.dtype.kind, want.kind}
    if kinds <= {"f"} or kinds <= {"i", "u"} or value.dtype.name == "bfloat16" \
            or want.name == "bfloat16":
        return value.astype(want)
    raise ValueError(f"{where}: {name} holds {value.dtype}, the variable {var.name!r} is "
                     f"{want}")


def _read(store: Any, path: str, i: int, var: Any, shapes: dict[int, tuple[int, ...]],
          where: str, label: str) -> np.ndarray:
    """Variable ``i`` of ``path`` from the file, in ``var``'s dtype and shape (a variable
    Keras saves in another shape is checked against that shape, then reshaped)."""
    saved = shapes.get(id(var))
    like = var if saved is None else _layouts.SavedLike(var, saved)
    value = _fit(store.read(path, i, like), var, where, f"{label}/vars/{i}")
    return value if saved is None else value.reshape(tuple(var.shape))


def _load_into(model: Any, store: Any, where: str, skip_mismatch: bool) -> None:
    """Read every variable of ``model`` (and its optimizer) from ``store``, checking all
    of them before any is assigned: a bad file leaves the model as it was."""
    opt = getattr(model, "optimizer", None)
    trainable = model.trainable_variables
    pending: list[tuple[Any, np.ndarray]] = []
    consumed: set[str] = set()
    shapes = _layouts.saved_shapes(model)
    for path, obj in _walk.saveables(model, include_optimizer=True):
        consumed.add(path)
        label = path or "the model itself"
        if _walk._is_optimizer(obj):
            n = store.count(path)
            variables = _walk.optimizer_variables(obj, trainable)
            if n > len(variables) and "_slots" in obj.__dict__ and \
                    not _walk.optimizer_built(obj):
                _walk.build_optimizer(obj, trainable)
                variables = _walk.optimizer_variables(obj, trainable)
            _layouts.add_slot_shapes(obj, trainable, shapes)
        else:
            variables = _walk.own_variables(obj)
        n = store.count(path)
        if n != len(variables):
            msg = (f"{where}: {label} ({type(obj).__name__} {obj.name!r}) has "
                   f"{len(variables)} variables, the file holds {n} for it")
            if skip_mismatch:
                warnings.warn(msg + "; skipped (skip_mismatch=True)", stacklevel=3)
                continue
            raise ValueError(msg)
        try:
            values = [(v, _read(store, path, i, v, shapes, where, label))
                      for i, v in enumerate(variables)]
        except ValueError as e:
            if skip_mismatch and "shape" in str(e):
                warnings.warn(f"{e}; skipped (skip_mismatch=True)", stacklevel=3)
                continue
            raise
        pending += values
    extra = sorted(p for p, keys in store.groups.items()
                   if keys and p not in consumed and not p.endswith("seed_generator")
                   and not (p.split("/")[0] == "optimizer" and opt is None))
    if extra:
        msg = (f"{where}: the file holds weights for {extra[:8]}, which the model has no "
               f"layer for (a different architecture?)")
        if not skip_mismatch:
            raise ValueError(msg)
        warnings.warn(msg + "; ignored (skip_mismatch=True)", stacklevel=3)
    for var, value in pending:
        var.assign(value)


# --- random state ----------------------------------------------------------------------

def _layer_seeds(model: Any) -> list[int]:
    seeds = []
    for layer in [model, *model.submodules]:
        seed = layer.__dict__.get("seed")
        if isinstance(seed, int) and not isinstance(seed, bool) and seed not in seeds:
            seeds.append(seed)
    return seeds


def _layer_generators(model: Any, names: bool = False) -> dict[str, Any]:
    """The random streams the model's layers keep, keyed ``"<i>/<layer class>/<attribute>"``
    by the layer's place in ``[model, *model.submodules]`` (the same in a model loaded
    from the same config). With ``names``, also keyed ``"<i>/<layer name>/<attribute>"``,
    as earlier files name them. The class, not the name, is written: a layer made inside
    another (a recurrent layer's cell) gets a new automatic name in a loaded model."""
    from ..random import SeedGenerator

    out = {}
    for i, layer in enumerate([model, *model.submodules]):
        for attr, value in vars(layer).items():
            if isinstance(value, (SeedGenerator, em.random.Generator)):
                out[f"{i}/{type(layer).__name__}/{attr}"] = value
                if names:
                    out.setdefault(f"{i}/{layer.name}/{attr}", value)
    return out


def _random_state(model: Any) -> dict[str, Any]:
    # the op-level stream of a seed= (em.random's own per-seed generator), as layers draw
    return {"global": em.random.get_global_generator().state,
            "seeds": {str(s): em.random._gen(s).state for s in _layer_seeds(model)},
            "generators": {k: g.state for k, g in _layer_generators(model).items()}}


def _check_state(state: Any, where: str) -> dict[str, Any]:
    """A saved generator state as ``em.random.Generator.state`` takes it; a malformed one
    or numpy's PCG64 (ember's generator before Philox) raises, naming the file."""
    try:
        key, stream, counter = em.random.checked_state(state)
    except ValueError as e:
        raise ValueError(f"{where}: metadata.json's random state: {e}") from None
    return {"bit_generator": em.random.STATE_FORMAT, "key": key, "stream": stream,
            "counter": counter}


def _restore_random(meta: dict[str, Any], where: str, model: Any) -> None:
    """Sets the saved random state, all of it or (on any fault) none of it."""
    saved = (meta.get("ember") or {}).get("random") if isinstance(meta.get("ember"),
                                                                  dict) else None
    if saved is None:
        return
    if not isinstance(saved, dict) or not isinstance(saved.get("seeds", {}), dict) or \
            not isinstance(saved.get("generators", {}), dict):
        raise ValueError(f"{where}: metadata.json's random state is malformed")
    held = _layer_generators(model, names=True)
    streams = []
    for key, state in saved.get("generators", {}).items():
        if key not in held:
            raise ValueError(f"{where}: metadata.json's random state names a random stream "
                             f"{key!r:.80} that the loaded model has no layer for")
        streams.append((held[key], _check_state(state, where)))
    glob = _check_state(saved.get("global"), where)
    seeds = {}
    for key, state in saved.get("seeds", {}).items():
        if not (isinstance(key, str) and key.lstrip("-").isdigit() and len(key) < 40):
            raise ValueError(f"{where}: metadata.json's random state names seed {key!r:.40}")
        seeds[int(key)] = _check_state(state, where)
    em.random.get_global_generator().state = glob
    for seed, state in seeds.items():
        em.random._gen(seed).state = state
    for gen, state in streams:
        gen.state = state


# --- the public functions ----------------------------------------------------------------

def save_model(model: Any, filepath: Any, overwrite: bool = True, zipped: Any = None,
               **kwargs: Any) -> None:
    """Save ``model`` as a ``.keras`` file: config, weights, optimizer state, random state.

    The file is written atomically: a save that fails or is killed half way leaves the
    file that was there whole.

    Args:
        model: the model (Sequential, functional, or a subclass with ``get_config``).
        filepath: a path ending in ``.keras``.
        overwrite: False refuses to replace an existing file (Keras asks on the terminal
            instead; ember raises ``FileExistsError``).
        zipped: None or True (a ``.keras`` zip); ember writes no unzipped directories.

    Raises:
        ValueError: another extension, ``zipped=False``, an unknown keyword argument,
            or something in the model that cannot be saved (a lambda: see
            ``serialize_keras_object``).
        FileExistsError: the file exists and ``overwrite`` is False.
    """
    path = _path(filepath, "save_model")
    if kwargs:
        raise ValueError(f"save_model: unexpected keyword arguments {sorted(kwargs)} (ember "
                         f"takes overwrite= and zipped=)")
    if zipped not in (None, True):
        raise ValueError(f"save_model: zipped={zipped!r}: ember writes .keras archives only "
                         f"(zipped=None or True)")
    if path.endswith((".h5", ".hdf5")):
        raise ValueError(f"save_model: {path!r}: Keras 2's whole-model .h5 format is not "
                         f"written by ember; save as .keras (or save_weights to "
                         f".weights.h5)")
    if not path.endswith(".keras"):
        raise ValueError(f"save_model: invalid filepath extension {path!r}: expected a "
                         f"`.keras` file")
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"save_model: {path!r} exists and overwrite=False")
    if not model.built:
        warnings.warn(f"save_model: {model.name} has not been built yet, so the file holds "
                      f"no weights", stacklevel=3)
    config = _serialization.serialize_keras_object(model)
    weights = _h5.write(_groups(model, include_optimizer=True))
    metadata = {"keras_version": KERAS_FORMAT_VERSION,
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
                "ember": {"version": _ember_version(), "random": _random_state(model)}}
    _archive.write(path, metadata, config, weights)


def load_model(filepath: Any, custom_objects: dict[str, Any] | None = None,
               compile: bool = True, safe_mode: bool = True) -> Any:
    """A model from a ``.keras`` file: its architecture, weights and (with ``compile``)
    its compiled optimizer with all its state; ember's random state is set to the one
    saved with it (so a dropout mask or a shuffle after loading is the one the saved
    model would have drawn).

    Nothing in the file runs code: classes resolve through ``custom_objects``, registered
    names and ember's own table only (see ``nn.saving``); the archive, its JSON and its
    HDF5 are checked before they are read.

    Args:
        filepath: a ``.keras`` file.
        custom_objects: ``{name: class or function}`` for names the file uses that are
            not registered.
        compile: False leaves the model uncompiled (the optimizer's state is not read).
        safe_mode: accepted for Keras; ember never loads Python code from a file
            (Keras's safe_mode=False loads lambdas), so both values behave the same.

    Raises:
        ValueError: the file is not a valid ``.keras`` archive, is damaged or truncated,
            names something unknown, or does not match the model its config makes (the
            message names the file and the fault).
    """
    path = _path(filepath, "load_model")
    if not isinstance(compile, bool):
        raise TypeError(f"load_model: compile must be a bool, got {compile!r}")
    if not isinstance(safe_mode, bool):
        raise TypeError(f"load_model: safe_mode must be a bool, got {safe_mode!r}")
    if custom_objects is not None and not isinstance(custom_objects, dict):
        raise TypeError(f"load_model: custom_objects must be a dict, got "
                        f"{type(custom_objects).__name__}")
    if path.endswith((".weights.h5", ".safetensors")):
        raise ValueError(f"load_model: {path!r} holds weights only; build the model and "
                         f"call model.load_weights({path!r})")
    if not path.endswith(".keras"):
        raise ValueError(f"load_model: file format not supported: {path!r}; ember reads "
                         f"Keras 3 `.keras` files")
    data = _archive.read_file(path, path)
    meta, config, weights = _archive.read(data, path)
    before = em.random.get_global_generator().state  # building the model draws from it
    try:
        return _load(path, meta, config, weights, custom_objects, compile, safe_mode)
    except BaseException:
        em.random.get_global_generator().state = before  # a failed load changes nothing
        raise


def _load(path: str, meta: dict[str, Any], config: dict[str, Any], weights: bytes,
          custom_objects: dict[str, Any] | None, compile: bool, safe_mode: bool) -> Any:
    store = _h5.WeightsH5(weights, f"{path} (model.weights.h5)")
    try:
        if not compile:
            config = {k: v for k, v in config.items() if k != "compile_config"}
        from ..layers import base

        token = base.WEIGHT_BUDGET.set([float(len(weights) + _SLACK)])
        try:
            model = _serialization.deserialize_keras_object(config, custom_objects,
                                                            safe_mode=safe_mode)
        except _serialization.ConfigError as e:
            raise ValueError(f"{path} (config.json): {e}") from e
        except ValueError as e:
            raise ValueError(f"{path} (config.json): {e}") from e
        finally:
            base.WEIGHT_BUDGET.reset(token)
        from ..layers.base import Layer

        if not isinstance(model, Layer):
            raise ValueError(f"{path}: config.json describes a {type(model).__name__}, not a "
                             f"model")
        _load_into(model, store, f"{path} (model.weights.h5)", skip_mismatch=False)
    finally:
        store.close()
    _restore_random(meta, f"{path} (metadata.json)", model)
    return model


def _weights_kind(path: str, op: str) -> str:
    if path.endswith(".weights.h5"):
        return "h5"
    if path.endswith(".safetensors"):
        return "safetensors"
    if path.endswith(".keras") and op == "load_weights":
        return "keras"
    want = ("`.weights.h5`, `.safetensors` or `.keras`" if op == "load_weights"
            else "`.weights.h5` or `.safetensors`")
    raise ValueError(f"{op}: the filename must end in {want}; received filepath={path!r}")


def save_weights(model: Any, filepath: Any, overwrite: bool = True,
                 max_shard_size: Any = None) -> None:
    """Save the model's weights (and its optimizer's variables, when compiled) in Keras
    3's ``.weights.h5`` layout, or as ``.safetensors`` with the same names, atomically.

    Raises:
        ValueError: another extension, an unbuilt model, or ``max_shard_size`` (sharded
            files are not written by ember).
        FileExistsError: the file exists and ``overwrite`` is False.
    """
    path = _path(filepath, "save_weights")
    if max_shard_size is not None:
        raise ValueError(f"save_weights: max_shard_size={max_shard_size!r}: ember writes one "
                         f"file (no shards)")
    kind = _weights_kind(path, "save_weights")
    if not model.built:
        raise ValueError(f"save_weights: {model.name} has not been built yet: call it on "
                         f"data (or build it) first")
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"save_weights: {path!r} exists and overwrite=False")
    groups = _groups(model, include_optimizer=True)
    if kind == "h5":
        data = _h5.write(groups)
    else:
        tensors = {(f"{p}/vars/{i}" if p else f"vars/{i}"): a
                   for p, _, arrays in groups for i, a in enumerate(arrays)}
        data = _safetensors.write(tensors, {"format": "keras-weights",
                                            "ember_version": _ember_version()})
    def fill(f: Any) -> None:
        f.write(data)

    _atomic.write_atomically(path, fill, "save_weights")


def load_weights(model: Any, filepath: Any, skip_mismatch: bool = False,
                 **kwargs: Any) -> None:
    """Load weights (and a compiled model's optimizer variables) saved by
    ``save_weights`` or ``save_model`` (or Keras 3) into ``model``.

    Every value is checked (count, shape, dtype, checksum) before any is assigned, so a
    file that does not fit leaves the model as it was. With ``skip_mismatch``, layers
    whose weights do not fit are skipped with a warning instead.

    Raises:
        ValueError: another extension, an unbuilt model, a damaged file, or weights that
            do not fit the model (the message names the file and the layer).
    """
    path = _path(filepath, "load_weights")
    if kwargs:
        raise ValueError(f"load_weights: unexpected keyword arguments {sorted(kwargs)}")
    if not isinstance(skip_mismatch, bool):
        raise TypeError(f"load_weights: skip_mismatch must be a bool, got {skip_mismatch!r}")
    kind = _weights_kind(path, "load_weights")
    if not model.built:
        raise ValueError(f"load_weights: {model.name} has not been built yet: call it on "
                         f"data (or build it) first, so that it has variables to load into")
    data = _archive.read_file(path, path)
    if kind == "keras":
        _, _, data = _archive.read(data, path)
        where = f"{path} (model.weights.h5)"
    else:
        where = path
    store: Any = _h5.WeightsH5(data, where) if kind != "safetensors" else \
        _SafetensorsStore(data, where)
    try:
        _load_into(model, store, where, skip_mismatch)
    finally:
        store.close()
