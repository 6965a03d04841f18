"""LAMMPS adapter: where the binary is (engine), how inputs are rendered (inputs, templates),
how logs are read (parse), which potential file to use (potentials), and the protocols."""
