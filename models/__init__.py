"""Shared vocabulary: targets, the operator library, the cost model and the file formats."""
