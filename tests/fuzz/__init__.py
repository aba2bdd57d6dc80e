"""Property-based fuzzing of the checker, the search and both CLIs (docs/fuzzing.md)."""
