"""The mapgpt node alphabet: MapGPT's module chain, one node type per module (see node_types.py)."""
