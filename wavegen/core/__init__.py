"""Pure core of wavegen: workloads, references, hashing and the plan; no I/O."""
