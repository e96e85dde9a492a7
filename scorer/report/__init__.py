"""Stage 3: report a scored run: metrics, the run summary, run comparison, console
tables, HTML report and files on disk.
"""
