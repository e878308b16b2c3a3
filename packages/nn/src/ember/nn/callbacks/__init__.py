"""Callbacks for ``Model.fit``/``evaluate``/``predict`` (Keras's ``keras.callbacks``).

Other packages plug in by subclassing ``Callback`` (or with ``LambdaCallback``).
"""

from ._base import Callback, CallbackList, History, LambdaCallback

__all__ = ["Callback", "CallbackList", "History", "LambdaCallback"]
