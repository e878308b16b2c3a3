"""Forward implementations, one module per op family; each op is registered once."""
