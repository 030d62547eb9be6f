"""minigraph: a small TensorFlow-like dataflow runtime.

Build a graph with the Python builders (``mg.constant``, ``mg.space_to_batch_nd``...)
or with the C++-style classes in ``minigraph.ops``, then run it with a Session.
Importing minigraph is silent and never imports CuPy or touches a GPU.
"""

from . import config, errors
from .dtypes import (
    DType,
    as_dtype,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .graph import Graph, Node, Operation, Output
from .op_def import OpDef
from .registry import registered_ops
from .scope import (
    Scope,
    control_dependencies,
    device,
    get_default_graph,
    name_scope,
    reset_default_graph,
)
from .session import ClientSession, RunMetadata, RunOptions, Session
from .shapes import TensorShape

bool = bool_  # noqa: A001  (mg.bool, as tf.bool)

from . import ops  # noqa: E402  (registers every op; needs the runtime above)

globals().update(ops.builders())

__version__ = "0.1.0"

__all__ = [
    "DType",
    "as_dtype",
    "bool",
    "bool_",
    "complex64",
    "complex128",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "Graph",
    "Node",
    "Operation",
    "Output",
    "OpDef",
    "registered_ops",
    "Scope",
    "control_dependencies",
    "device",
    "get_default_graph",
    "name_scope",
    "reset_default_graph",
    "ClientSession",
    "RunMetadata",
    "RunOptions",
    "Session",
    "TensorShape",
    "config",
    "errors",
    "ops",
] + sorted(ops.builders())
