"""Independent legality checker for npu-schedule/1 files (imports nothing of the search)."""
