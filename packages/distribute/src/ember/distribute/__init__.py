"""ember.distribute: data-parallel training on MPI, with Horovod's API in ember's names.

``init()`` joins the world this process was launched into: ``mpiexec -n N`` gives N ranks
over MPI (mpi4py), a plain ``python script.py`` a world of one, so the same program runs
both ways. Gradients are averaged with :func:`DistributedOptimizer` or
:class:`DistributedGradientTape`; only the chief writes files (:func:`chief_logdir`,
:func:`chief_only`) and every rank resumes from the chief's latest checkpoint
(:func:`restore_latest`). Every collective checks that the ranks agree on what they are
doing and raises on every rank when they do not, and gives up with
:class:`CommunicationTimeout` rather than waiting forever for a rank that died.
"""

from . import callbacks
from ._broadcast import broadcast_object_values, broadcast_variables
from ._chief import chief_logdir, chief_only, restore_latest
from ._collectives import allgather, allreduce, broadcast
from ._data import even_batches
from ._errors import CommunicationTimeout, DistributeError, RankMismatchError
from ._optimizer import DistributedGradientTape, DistributedOptimizer
from ._version import __version__ as __version__  # tf.__version__, keras.__version__
from ._world import barrier, init, is_chief, local_rank, local_size, rank, shutdown, size

__all__ = [
    "CommunicationTimeout",
    "DistributeError",
    "DistributedGradientTape",
    "DistributedOptimizer",
    "RankMismatchError",
    "allgather",
    "callbacks",
    "allreduce",
    "barrier",
    "broadcast",
    "broadcast_object_values",
    "broadcast_variables",
    "chief_logdir",
    "chief_only",
    "even_batches",
    "init",
    "is_chief",
    "local_rank",
    "local_size",
    "rank",
    "restore_latest",
    "shutdown",
    "size",
]
