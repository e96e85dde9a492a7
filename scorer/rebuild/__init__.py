"""Stage 1: rebuild each attempt's trajectory from the capture store alone.

Load the rows (:mod:`.load`), split threads (:mod:`.threads`), parse each assistant
turn (:mod:`.turns`, :mod:`.parsers`), join observations to calls (:mod:`.observations`,
:mod:`.join`) and build the :class:`~probegate.scorer.trajectory.Trajectory` (:mod:`.build`).
"""
