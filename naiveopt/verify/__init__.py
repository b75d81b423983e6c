"""Verification: run a transformed kernel against its naive input on random data (PoCL)."""
