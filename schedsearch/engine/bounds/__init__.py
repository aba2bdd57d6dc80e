"""Lower bounds on the makespan that solve LPs or CP-SAT (``lower`` combines them)."""
