"""Node types of the eqa executor."""
