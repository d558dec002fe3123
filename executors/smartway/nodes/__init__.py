"""Node types of the smartway executor."""
