"""Repositories (code search): a folder's definitions as a collection, kept in step with its files.

- `walk`: which files of a folder are its source (`.gitignore` respected, vendored and build folders skipped);
- `records`: the points a repository keeps in the store (its head, a point per file, a point per unit);
- `memory`: one repository's units in memory, ranked by the code ranker (`ctxsieve.ingest.coderank`);
- `results`: hits packed to the budget as the agent receives them;
- `index`: `RepoIndex`, the verbs (register, sync, status, search, delete) and the worker that syncs;
- `vectors`: `UnitVectors`, the units' vectors made in the background once a repository is searchable.
"""

from .index import CodeSearch, FileOrder, RepoIndex, RepoStatus
from .results import CodeResult
from .vectors import UnitVectors

__all__ = ["CodeResult", "CodeSearch", "FileOrder", "RepoIndex", "RepoStatus", "UnitVectors"]
