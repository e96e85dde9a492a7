"""Intercept mapping files shipped with probegate (``example.yaml``); data only."""
