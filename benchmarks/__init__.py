"""Benchmarks that print figures: quality against published results and a peer, speed, scale.

``python -m benchmarks --quick`` runs them all and writes one JSON file and one Markdown
table per run (see ``benchmarks/README.md``). Nothing here passes or fails: figures are
measured, never asserted.
"""
