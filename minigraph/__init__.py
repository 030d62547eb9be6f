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

from . import ops  # type: ignore[attr-defined]  # noqa: E402  (ops/ is installed here)
from .ops.array_ops import (  # noqa: E402  (the op library needs the runtime above)
    cast,
    constant,
    fill,
    identity,
    ones,
    ones_like,
    placeholder,
    range,
    zeros,
    zeros_like,
)
from .ops.data_flow_ops import (  # noqa: E402  (the op library needs the runtime above)
    dynamic_partition,
    dynamic_stitch,
    parallel_dynamic_stitch,
)
from .ops.gather_ops import (  # noqa: E402  (the op library needs the runtime above)
    gather,
    gather_nd,
)
from .ops.math_ops import (  # noqa: E402  (the op library needs the runtime above)
    add,
    divide,
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    subtract,
)
from .ops.nn_ops import (  # noqa: E402  (the op library needs the runtime above)
    conv2d,
)
from .ops.scatter_ops import (  # noqa: E402  (the op library needs the runtime above)
    scatter_nd,
    tensor_scatter_nd_add,
    tensor_scatter_nd_max,
    tensor_scatter_nd_min,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
)
from .ops.shape_ops import (  # noqa: E402  (the op library needs the runtime above)
    rank,
    reshape,
    shape,
    size,
    transpose,
)
from .ops.slice_ops import (  # noqa: E402  (the op library needs the runtime above)
    concat,
    stack,
    strided_slice,
)
from .ops.spacetobatch_ops import (  # noqa: E402  (the op library needs the runtime above)
    batch_to_space_nd,
    space_to_batch_nd,
)

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
    "add",
    "batch_to_space_nd",
    "cast",
    "concat",
    "constant",
    "conv2d",
    "divide",
    "dynamic_partition",
    "dynamic_stitch",
    "equal",
    "fill",
    "gather",
    "gather_nd",
    "greater",
    "greater_equal",
    "identity",
    "less",
    "less_equal",
    "logical_and",
    "logical_not",
    "logical_or",
    "maximum",
    "minimum",
    "multiply",
    "negative",
    "not_equal",
    "ones",
    "ones_like",
    "parallel_dynamic_stitch",
    "placeholder",
    "range",
    "rank",
    "reshape",
    "scatter_nd",
    "shape",
    "size",
    "space_to_batch_nd",
    "stack",
    "strided_slice",
    "subtract",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_max",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
    "transpose",
    "zeros",
    "zeros_like",
]
