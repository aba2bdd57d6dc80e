"""Serving mixes: the mix file, requests as layers, the three policies, the command."""
