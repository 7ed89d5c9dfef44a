"""folio's domain: entities, value objects, ports and errors. Pure Python, no I/O."""
