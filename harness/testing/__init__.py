"""Test and benchmark helpers, not used by the harness itself: a loopback HTTP
server speaking the Anthropic and OpenAI protocols (`loopback_server`) and a
deterministic scripted BabyAI planner behind it (`scripted_planner`). They
ship in the package because benchmarks and the cassette recorder use them too.
"""
