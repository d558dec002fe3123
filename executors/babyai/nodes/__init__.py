"""Node types of the BabyAI executor, one module per concern."""
