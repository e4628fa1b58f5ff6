"""The code ranker: one reading of a request and one scoring of code units for every cut of code.

- `units`: a source file as definitions (qualified names, true line spans) and the module code between them;
- `query`: a request read as code is written (identifiers, files, modules, traceback frames);
- `lexical`: BM25 over units with the repository's own statistics, updated a file at a time;
- `ranker`: the signals and the one rule that combines them.
"""
