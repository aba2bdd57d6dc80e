"""Calibrating a target from measured timings, and saying how wrong the cost model is.

``measurements`` reads per-op CSVs and traces of a schedule's run; ``work`` puts them in
the cost model's terms; ``fit`` is the robust fit with honest intervals; ``engines`` fits
each engine and tests its residuals for patterns; ``ddr`` fits the bus from overlapping
transfers; ``calibration`` composes them into a report and a calibrated target;
``replay`` sets a measured run beside its schedule; ``synthetic`` draws test data from a
known parameter set. See docs/calibrate.md.
"""
