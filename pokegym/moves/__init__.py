"""Designed moves: a language model designs new moves, pokegym checks, judges and plays them.

* :mod:`pokegym.moves.schema`: the design (:class:`MoveDesign`), its JSON and Showdown forms;
* :mod:`pokegym.moves.balance`: the deterministic validity and balance evaluator;
* :mod:`pokegym.moves.generate`: generation with any :class:`~pokegym.llm.LanguageModel`;
* :mod:`pokegym.moves.judge`: the LLM judge (creativity, originality, verdict);
* :mod:`pokegym.moves.report`: batch evaluation (``pokegym moves eval``);
* :mod:`pokegym.moves.library`: approved moves, played through Showdown's ``pokegym`` mod in
  the formats ``gen9designedmoves`` and ``gen9designedmovesrandombattle``.

See docs/moves.md.
"""

from pokegym.moves.library import DESIGNED_FORMATS, LibraryMove, MoveLibrary, MoveLibraryError
from pokegym.moves.schema import DESIGN_SCHEMA, EFFECTS, MoveDesign, MoveFormatError

__all__ = [
    "DESIGNED_FORMATS",
    "DESIGN_SCHEMA",
    "EFFECTS",
    "LibraryMove",
    "MoveDesign",
    "MoveFormatError",
    "MoveLibrary",
    "MoveLibraryError",
]
