"""Stage 2: judge a trajectory against its task.

Match actual calls with expected actions (:mod:`.matching`), check the answer
(:mod:`.answer`) and the world state (:mod:`.outcome`), score the task
(:mod:`.task_score`), and label why it failed (:mod:`.failures`, with the wire rules of
:mod:`.wire_rules` and the loop rules of :mod:`.loops`).
"""
