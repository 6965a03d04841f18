"""zeopp protocols; importing this package registers them."""
