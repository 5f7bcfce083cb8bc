"""Zip archives whose bytes depend on their contents alone: every entry dated the earliest date a zip can
hold, readable by all (0644), deflated, sorted by name, so a rebuild changes nothing; and the XML put in
them, written the same way each time."""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip entry can hold


def entry(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    """Add `data` as `name`, with no time or owner of this machine in it."""
    info = zipfile.ZipInfo(name, date_time=DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


def write(path: Path, entries: dict[str, bytes]) -> None:
    """A zip at `path` holding `entries` (name -> bytes), sorted by name."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(entries):
            entry(zf, name, entries[name])


def xml(root: ET.Element, namespaces: dict[str, str], indent: bool = True) -> bytes:
    """`root` as UTF-8 with its declaration, each namespace URI under the prefix given ("" the default;
    ElementTree's prefixes are process-wide, so they are set again each time); `indent` lays it out
    (not where whitespace inside is text, as in <pre>)."""
    for prefix, uri in namespaces.items():
        ET.register_namespace(prefix, uri)
    if indent:
        ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
