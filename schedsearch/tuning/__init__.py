"""The parts of :func:`schedsearch.tune`: the configuration space, screening, batches."""
