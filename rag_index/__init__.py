"""Data folder shipped with simagent (located at run time via importlib.resources)."""
