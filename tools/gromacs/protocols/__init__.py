"""gromacs protocols; importing this package registers them."""
