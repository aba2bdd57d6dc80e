"""Dependent chains: layouts, conversions, on-chip forwarding and what is recoverable."""
