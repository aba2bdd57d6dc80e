"""Tests of the schedule search (schedsearch/ except placement/ and the small commands)."""
