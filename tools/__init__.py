"""Engine adapters: one subpackage per simulation engine."""
