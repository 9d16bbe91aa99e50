"""Pokémon sprites for the web page, offline, from the npm package ``pokesprite-images``.

``pokegym showdown install`` installs ``pokesprite-images`` (the box sprites of the
main series up to Sword/Shield) next to Showdown. The page asks for
``/sprites/<file>.png`` only for files this index found, so a missing sprite (every
Paldea Pokémon, a folder that is not installed) is never a failed request: the page
draws a silhouette in the Pokémon's type colours instead.

The package's code and data are MIT-licensed; its readme says the sprite images
themselves are © Nintendo/Creatures Inc./GAME FREAK Inc. They are downloaded by the
user's own npm install and never shipped with pokegym.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from pokegym.errors import PokegymError
from pokegym.showdown.install import showdown_package_dir

SPRITES_PACKAGE = "pokesprite-images"
SPRITES_SUBDIR = ("pokemon-gen8", "regular")
_STEM = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def sprites_folder() -> Path | None:
    """The folder of box sprites, or None when the package is not installed.

    ``POKEGYM_SPRITES_DIR`` names a ``pokesprite-images`` folder explicitly; otherwise
    the package is looked up beside the installed ``pokemon-showdown`` package.
    """
    override = os.environ.get("POKEGYM_SPRITES_DIR")
    if override:
        base = Path(override).expanduser()
    else:
        try:
            base = showdown_package_dir(install=False).parent / SPRITES_PACKAGE
        except PokegymError:
            return None
    folder = base.joinpath(*SPRITES_SUBDIR)
    return folder if folder.is_dir() else None


def slug(text: str) -> str:
    """pokesprite's file-name spelling: ``Mr. Mime`` -> ``mr-mime``, ``Flabébé`` -> ``flabebe``."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    ascii_text = re.sub(r"[’'.:%]", "", ascii_text.lower())
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]+", "-", ascii_text)).strip("-")


class SpriteIndex:
    """Which species have a sprite file, and its URL on the page's server.

    Args:
        folder: a folder of ``<slug>.png`` files (:func:`sprites_folder`), or None for
            no sprites at all (every Pokémon then gets its silhouette).
        species: Showdown's species table (``GameNames.dex.species``), for the base
            species and form of a species id.
    """

    def __init__(self, folder: Path | None, species: dict[str, dict[str, object]]):
        self.folder = folder
        self._species = species
        self._stems = (
            frozenset(p.stem for p in folder.glob("*.png")) if folder is not None else frozenset()
        )
        self._cache: dict[str, str | None] = {}

    def __len__(self) -> int:
        return len(self._stems)

    def stem(self, species_id: str) -> str | None:
        """The sprite file stem for a species id (``rotomwash`` -> ``rotom-wash``), or None."""
        if species_id in self._cache:
            return self._cache[species_id]
        found = None
        entry = self._species.get(species_id)
        if entry is not None and self._stems:
            base = slug(str(entry.get("baseSpecies") or entry.get("name") or species_id))
            forme = slug(str(entry.get("forme") or ""))
            parts = forme.split("-") if forme else []
            # The full form first, then shorter forms (Necrozma-Dusk-Mane -> necrozma-dusk),
            # then the base species' sprite.
            for cut in range(len(parts), -1, -1):
                candidate = "-".join([base, *parts[:cut]])
                if candidate in self._stems:
                    found = candidate
                    break
        self._cache[species_id] = found
        return found

    def url(self, species_id: str) -> str | None:
        stem = self.stem(species_id)
        return f"/sprites/{stem}.png" if stem else None

    def file(self, stem: str) -> Path | None:
        """The file for a stem the index holds (anything else, e.g. ``../x``, is None)."""
        if self.folder is None or not _STEM.match(stem) or stem not in self._stems:
            return None
        return self.folder / f"{stem}.png"
