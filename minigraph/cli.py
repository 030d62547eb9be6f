"""The ``minigraph`` command.

minigraph demo      run the seed documents' examples, printing inputs and results
"""

from __future__ import annotations

import argparse
import sys


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="minigraph",
        description="minigraph: a small TensorFlow-like dataflow runtime.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser(
        "demo",
        help="run the documented examples (SpaceToBatchND, DynamicStitch, ...)",
        description="Build and run each example from the op documents, print its inputs "
        "and result, and check the result against the documented value.",
        epilog="example: minigraph demo",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "demo":
        from . import demo

        return demo.main()
    return 2  # argparse rejects unknown commands before this


if __name__ == "__main__":
    sys.exit(main())
