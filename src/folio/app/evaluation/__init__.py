"""Offline evaluations of folio's agent policies (query rewriting, retrieval) on shared sets."""
