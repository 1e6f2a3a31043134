"""quadscope: an empirical scaling profiler.

Data flows one way: spec -> plan -> runs -> sweep (stored) -> fits -> comparison
-> report -> renderer. See docs/architecture.md.
"""

__version__ = "0.1.0"
