"""Audit agent: does nothing and says so (a ceiling of 0 on every figure)."""

print("I cannot help with that.")
