"""zeopp adapter (see tools/lammps for the layout: engine, inputs, parse, check, protocols)."""
