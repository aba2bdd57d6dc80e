"""Lower bounds on the makespan: the parts that solve LPs or CP-SAT, and the waits that
forced orders impose on a lane kind (``phases``); ``lower`` combines them."""
