"""Bundled example workloads, and the script that writes the decoder layers among them."""
