"""probegate: how far does an LLM agent really get, and why does it stop?"""

__version__ = "0.1.0"

__all__ = ["__version__"]
