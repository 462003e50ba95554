"""Source positions of IR: :class:`Location` (``file:line:col``) and MLIR's named
:class:`NameLoc`; :mod:`tdflow.dialect.ir.core` re-exports both.

>>> str(Location("prog.mlir", 3, 7)), str(NameLoc("conv1"))
('prog.mlir:3:7', 'conv1')
"""

from __future__ import annotations

__all__ = ["Location", "NameLoc", "UNKNOWN_LOC"]


class Location:
    """A source position ``file:line:col`` (1-based). Locations never affect equality of IR.

    >>> str(Location("prog.mlir", 3, 7))
    'prog.mlir:3:7'
    """

    __slots__ = ("file", "line", "col")

    def __init__(self, file: str, line: int, col: int) -> None:
        self.file = file
        self.line = line
        self.col = col

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def __repr__(self) -> str:
        return f"Location({self.file!r}, {self.line}, {self.col})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Location)
            and self.file == other.file
            and self.line == other.line
            and self.col == other.col
        )

    def __hash__(self) -> int:
        return hash((self.file, self.line, self.col))

    @property
    def known(self) -> bool:
        return self.line > 0


#: Location of IR built from Python without a source position.
UNKNOWN_LOC = Location("<unknown>", 0, 0)


class NameLoc(Location):
    """MLIR's ``loc("name")``: a named location (an ONNX node's name), no file position.

    >>> str(NameLoc("conv1")), NameLoc("conv1").line
    ('conv1', 0)
    """

    __slots__ = ()

    def __init__(self, name: str) -> None:
        super().__init__(name, 0, 0)

    def __str__(self) -> str:
        return self.file
