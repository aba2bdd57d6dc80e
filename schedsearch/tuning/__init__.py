"""The parts of :func:`schedsearch.tune.tune`: the configuration space, screening, batches."""
