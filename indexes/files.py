"""Reading files for agents, confined to configured roots.

The real path is resolved (symlinks and `..` included) and must lie inside a root; the file is then
opened without following links and checked with fstat on the open descriptor, so a link swapped in
between cannot lead outside. Only regular files are read; FIFOs and devices never block or stream.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ctxsieve_client.languages import LANGUAGES

from .errors import Forbidden, NotFound, TooLarge, UnsupportedMedia

_SPECIAL = (Path("/proc"), Path("/sys"), Path("/dev"))
SUFFIX_TYPES = {
    ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html", ".json": "json",
    ".rst": "text", ".csv": "text",
    ".txt": "auto", ".log": "auto",  # told by their text: a saved test log is a log
    **dict.fromkeys(LANGUAGES, "code"),  # the code kind's own table: a file it has a grammar for
}


@dataclass(frozen=True)
class FileText:
    path: str
    text: str
    size: int
    mtime: float
    content_type: str


class FileReader:
    def __init__(self, roots: list[Path], max_bytes: int) -> None:
        self.roots = [Path(os.path.realpath(r)) for r in roots]
        self.max_bytes = max_bytes

    def resolve(self, path: str) -> Path:
        if not self.roots:
            raise Forbidden("reading files is off: set CTXSIEVE_READ_ROOTS to the folders agents may read")
        if "\x00" in path:
            raise Forbidden("a path may not contain NUL")
        candidate = Path(path) if os.path.isabs(path) else self.roots[0] / path
        real = Path(os.path.realpath(candidate))
        if any(real == s or s in real.parents for s in _SPECIAL):
            raise Forbidden(f"{path}: special file systems are never read")
        if not any(real == root or root in real.parents for root in self.roots):
            raise Forbidden(f"{path}: outside the read roots (CTXSIEVE_READ_ROOTS: the folders the service may read; "
                            "restart it with this folder added, `:` between folders; `make run` and `ctxsieve service "
                            "start` read the home folder when it is unset)")
        return real

    def read(self, path: str) -> FileText:
        real = self.resolve(path)
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError as exc:
            raise NotFound(f"{path}: no such file") from exc
        except OSError as exc:  # ELOOP: the last component became a link after resolving
            raise Forbidden(f"{path}: cannot be opened safely ({exc.strerror})") from exc
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            if stat.S_ISDIR(info.st_mode):
                raise UnsupportedMedia(f"{path}: a directory, not a text file")
            raise Forbidden(f"{path}: not a regular file (a device, FIFO or socket)")
        with os.fdopen(fd, "rb") as handle:
            if info.st_size > self.max_bytes:
                raise TooLarge(f"{path}: {info.st_size} bytes, over the {self.max_bytes}-byte limit")
            data = handle.read(self.max_bytes + 1)
        if len(data) > self.max_bytes:
            raise TooLarge(f"{path}: over the {self.max_bytes}-byte limit")
        text, kind = decode(data, real)
        return FileText(str(real), text, info.st_size, info.st_mtime, kind)


def decode(data: bytes, path: Path) -> tuple[str, str]:
    if data.startswith(b"%PDF-"):
        return pdf_text(data, path), "text"
    if b"\x00" in data[:8192]:
        raise UnsupportedMedia(f"{path}: binary content (NUL bytes), not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnsupportedMedia(f"{path}: not UTF-8 text") from exc
    return text, SUFFIX_TYPES.get(path.suffix.lower(), "auto")


def pdf_text(data: bytes, path: Path) -> str:
    import io

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError) as exc:
        raise UnsupportedMedia(f"{path}: a PDF that cannot be read ({exc})") from exc
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise UnsupportedMedia(f"{path}: a PDF with no extractable text")
    return text
