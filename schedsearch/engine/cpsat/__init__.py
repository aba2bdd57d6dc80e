"""The CP-SAT model: variables, constraints, objectives, and composing them."""
