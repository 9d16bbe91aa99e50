"""Experience memories: what past battles teach (retrieval for LLM prompts, k-NN values)."""
