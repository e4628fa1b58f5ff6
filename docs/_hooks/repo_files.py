"""MkDocs hook: repository files outside docs/ that the pages link to join the site under their repository path.

A page links to a file outside docs/ as GitHub resolves it (`../bench/README.md` from docs/ideas.md); MkDocs only
knows files under docs/. So the targets of such links (and, for a linked markdown page, the targets of its own links,
followed) are added to the site at their repository path (`bench/README.md`), and every relative link is rewritten to
the path between the two inside the site, where MkDocs validates it as usual. A link that leaves the repository
(`../shared/...`) is left as written, so strict mode fails on it.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

LINK = re.compile(r"(\]\()([^)\s]+)(\))")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def _root(config: Any) -> Path:
    return Path(config["docs_dir"]).resolve().parent


def _docs_prefix(config: Any) -> str:
    return Path(config["docs_dir"]).resolve().relative_to(_root(config)).as_posix() + "/"


def _repo_path(config: Any, file: File) -> str:
    """Where a page lies in the repository: a docs page under docs/, an added file at its own path."""
    added = Path(file.abs_src_path or "").resolve().is_relative_to(Path(config["docs_dir"]).resolve())
    return _docs_prefix(config) + file.src_uri if added else file.src_uri


def _site_path(config: Any, repo_path: str) -> str:
    docs = _docs_prefix(config)
    return repo_path[len(docs):] if repo_path.startswith(docs) else repo_path


def _links(markdown: str) -> list[str]:
    prose = FENCE.sub("", markdown)
    return [m.group(2) for m in LINK.finditer(prose)]


def _target(repo_path: str, url: str) -> str | None:
    """The repository path a relative link points to, or None for an external, absolute or anchor-only link."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", url) or url.startswith(("/", "#")):
        return None
    path = url.split("#", 1)[0].split("?", 1)[0]
    return posixpath.normpath(posixpath.join(posixpath.dirname(repo_path), path)) if path else None


def on_files(files: Files, config: Any) -> Files:
    root = _root(config)
    queue = [(_repo_path(config, f), Path(f.abs_src_path).read_text()) for f in files.documentation_pages()]
    known = {_site_path(config, _repo_path(config, f)) for f in files}
    while queue:
        repo_path, markdown = queue.pop()
        for url in _links(markdown):
            target = _target(repo_path, url)
            if target is None or target.startswith("../") or _site_path(config, target) in known:
                continue
            if not (root / target).is_file():
                continue
            known.add(target)
            files.append(File(target, str(root), config["site_dir"], config["use_directory_urls"]))
            if target.endswith(".md"):
                queue.append((target, (root / target).read_text()))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, **_: Any) -> str:
    repo_path = _repo_path(config, page.file)
    here = posixpath.dirname(_site_path(config, repo_path))

    def rewrite(match: re.Match[str]) -> str:
        url = match.group(2)
        target = _target(repo_path, url)
        if target is None or target.startswith("../"):
            return match.group(0)
        rest = url[len(url.split("#", 1)[0]):]
        return f"{match.group(1)}{posixpath.relpath(_site_path(config, target), here or '.')}{rest}{match.group(3)}"

    return LINK.sub(rewrite, markdown)
