"""Serving mixes: requests (decoder layers at their phase) scheduled together, under three
policies scored by the one cost model (:mod:`schedsearch.mix.policies`,
:mod:`schedsearch.mix.figures`); :func:`schedsearch.mix.serve.serve` runs them all.

Layer: a feature; imports the engine and :mod:`models`, never the CLI.
"""
