"""Why an op type is not supported, and what to do about it: the kinds of ops minigraph
refuses (variables it cannot run, calls it does not make, TensorFlow 1 control flow in
forms it does not run, stateful random ops, ops with no kernel), shared by GraphDef import
(graph_def), kept unsupported nodes (opaque) and the CLI (graph_files, cli)."""

from __future__ import annotations

__all__ = ["CONTROL_FLOW_OPS", "KIND_HINTS", "unsupported_kind"]

# TensorFlow 1's control flow (frames, dead tensors) and the Ref forms of it: refused
# unless registered, with a hint of its own.
CONTROL_FLOW_OPS = frozenset(
    {
        "Enter",
        "RefEnter",
        "Exit",
        "RefExit",
        "Merge",
        "RefMerge",
        "Switch",
        "RefSwitch",
        "_SwitchN",
        "LoopCond",
        "NextIteration",
        "RefNextIteration",
    }
)

VARIABLE_OPS = frozenset(
    {
        "VarHandleOp",
        "_VarHandlesOp",
        "ReadVariableOp",
        "_ReadVariablesOp",
        "AssignVariableOp",
        "AssignAddVariableOp",
        "AssignSubVariableOp",
        "VarIsInitializedOp",
        "VariableShape",
        "DestroyResourceOp",
        "Variable",
        "VariableV2",
        "TemporaryVariable",
        "DestroyTemporaryVariable",
        "Assign",
        "AssignAdd",
        "AssignSub",
        "IsVariableInitialized",
        "CountUpTo",
    }
)
# Training updates of variables (ResourceApplyAdam, ApplyGradientDescent...), resource
# reads and writes (ResourceGather, ResourceScatterAdd...).
VARIABLE_PREFIXES = ("Resource", "Apply", "SparseApply")
# TensorFlow's random ops that draw from a generator's state (a fresh value per run).
STATEFUL_RANDOM_OPS = frozenset(
    {
        "RandomUniform",
        "RandomUniformInt",
        "RandomStandardNormal",
        "TruncatedNormal",
        "ParameterizedTruncatedNormal",
        "RandomShuffle",
        "RandomCrop",
        "Multinomial",
        "RandomGamma",
        "RandomPoisson",
        "RandomPoissonV2",
        "NonDeterministicInts",
        "RngSkip",
        "RngReadAndSkip",
        "UniformCandidateSampler",
        "LogUniformCandidateSampler",
        "LearnedUnigramCandidateSampler",
        "ThreadUnsafeUnigramCandidateSampler",
        "FixedUnigramCandidateSampler",
        "AllCandidateSampler",
    }
)
# Calls minigraph does not make (it runs PartitionedCall, StatefulPartitionedCall and a node
# named after a function of the GraphDef's library).
FUNCTION_CALL_OPS = frozenset({"SymbolicGradient", "RemoteCall"})

FREEZE = 'docs/tensorflow.md, "A frozen Keras model or a tf.function"'
KIND_HINTS = {
    "variable": "minigraph runs resource variables (mg.Variable) and TensorFlow 1's "
    "VariableV2 with Assign/AssignAdd/AssignSub, not this op (docs/training.md): give "
    "minigraph the model's SavedModel directory (its variables are frozen on load), or "
    f"freeze the variables into constants with TensorFlow (convert_variables_to_constants_v2; "
    f"{FREEZE})",
    "function call": "a call minigraph does not make (it runs PartitionedCall of the "
    "GraphDef's library): freeze the model with TensorFlow, which inlines its function calls "
    f"({FREEZE})",
    "control flow": "a form of TensorFlow's control flow minigraph does not run: freeze with "
    "lower_control_flow=False, which keeps While and If (docs/tensorflow.md, "
    '"Control flow and functions")',
    "stateful random": "a random op with state (dropout or noise while training): export the "
    "model with training=False, or make the random values a Placeholder and feed them",
    "no kernel": "minigraph has no kernel for this op type (docs/tensorflow.md, "
    '"Supported ops", lists the ones it has)',
}


def unsupported_kind(op: str) -> tuple[str, str]:
    """(kind, what to do) for an op type minigraph cannot run: a variable, a function call,
    control flow, a stateful random op, or an op with no kernel."""
    if op in VARIABLE_OPS or op.startswith(VARIABLE_PREFIXES):
        kind = "variable"
    elif op in FUNCTION_CALL_OPS or op.startswith("__inference_"):
        kind = "function call"
    elif op in CONTROL_FLOW_OPS or op.startswith(("TensorList", "TensorArray")):
        kind = "control flow"
    elif op in STATEFUL_RANDOM_OPS or (op.startswith("Stateful") and "Call" not in op):
        kind = "stateful random"
    else:
        kind = "no kernel"
    return kind, KIND_HINTS[kind]
