"""simagent: natural-language requests to checked, traceable simulations."""
__version__ = "0.1.0"
