"""Numbered SQL migrations (``NNN_name.sql``), applied in order by ``sqlite_db.Database.migrate``."""
