"""The scorer's self-test: scripted agents (a reference plan and its mutations)
written to a store and scored, to prove each rule can fail and pass.
"""
