"""Importers for the question bank: SocraTeach, SciQ and a generic JSONL/CSV schema (pure, no Django).

`pipeline.scan_file` is the entry point; `audits.services.questionbank` writes what it returns.
"""
