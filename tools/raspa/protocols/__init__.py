"""raspa protocols; importing this package registers them."""
