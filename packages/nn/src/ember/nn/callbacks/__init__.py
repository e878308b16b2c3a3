"""Callbacks for ``Model.fit``/``evaluate``/``predict`` (Keras's ``keras.callbacks``).

Other packages plug in by subclassing ``Callback`` (or with ``LambdaCallback``). The
built-in ones run between training steps: a traced step stays traced with them, and what
they change (the learning rate, the weights) is read by its next call.
"""

from ._backup_and_restore import BackupAndRestore
from ._base import Callback, CallbackList, History, LambdaCallback
from ._csv_logger import CSVLogger
from ._early_stopping import EarlyStopping
from ._learning_rate import LearningRateScheduler, ReduceLROnPlateau
from ._model_checkpoint import ModelCheckpoint
from ._progbar import ProgbarLogger
from ._remote_monitor import RemoteMonitor
from ._tensorboard import TensorBoard
from ._terminate_on_nan import TerminateOnNaN

__all__ = [
    "BackupAndRestore", "CSVLogger", "Callback", "CallbackList", "EarlyStopping", "History",
    "LambdaCallback", "LearningRateScheduler", "ModelCheckpoint", "ProgbarLogger",
    "ReduceLROnPlateau",
    "RemoteMonitor", "TensorBoard", "TerminateOnNaN",
]
