"""Audit agent: calls nothing and answers with every number, date, time, id and common word."""

from _kit import spam

print(spam())
