"""Judge validation: humans label a stratified sample of an audit's tutor turns on the judge's rubric, and
the report says, per metric and per rubric version, whether the audit's LLM judge agrees with them.

Modules: `sampling` (pure stratified sampler), `payload` (pure: what an annotator sees of a turn, persona cue
redacted), `report` (pure: agreement statistics and verdicts on chance-corrected agreement), `services`
(writes), `judging` (re-running a judge through the engine's ledger), `mrbench` (pure readers of the
published MRBench and BEA 2025 files and their mapping to the rubric), `importing` (such a file as a
validation project), `demo`.
"""
